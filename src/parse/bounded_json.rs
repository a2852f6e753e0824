//! JSON into a [`serde_json::Value`] with a budget: a document of more values, or an array
//! longer, than the caller allows is refused while it is read, before its tree is built.
//!
//! Used where oomdoc reads its own documents back (`run.json`, `probe.json`): a 254 MB probe
//! document exhausted memory and a `run.json` with 3 million arguments took 877 MB (issue 14).
//! Pure: bytes in, a value or an error out.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a document may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// Values in the whole document (each scalar, array and object counts one).
    pub max_values: usize,
    /// Elements of one array or entries of one object.
    pub max_length: usize,
}

/// Parses `bytes` as one JSON document within `limits`. The error is serde_json's, with line
/// and column; a budget error says which limit was passed.
pub fn from_slice(bytes: &[u8], limits: JsonLimits) -> Result<Value, serde_json::Error> {
    let mut budget = Budget { limits, values: 0 };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = BoundedValue(&mut budget).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct Budget {
    limits: JsonLimits,
    values: usize,
}

impl Budget {
    fn count<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.values += 1;
        if self.values > self.limits.max_values {
            return Err(E::custom(format!(
                "the document holds more than {} JSON values, more than oomdoc reads",
                self.limits.max_values
            )));
        }
        Ok(())
    }

    fn check_length<E: serde::de::Error>(&self, length: usize) -> Result<(), E> {
        if length > self.limits.max_length {
            return Err(E::custom(format!(
                "an array or object holds more than {} entries, more than oomdoc reads",
                self.limits.max_length
            )));
        }
        Ok(())
    }
}

struct BoundedValue<'a>(&'a mut Budget);

impl<'de> DeserializeSeed<'de> for BoundedValue<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::from(value))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::from(value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        self.0.count()?;
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::String(value))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.0.count()?;
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Value, A::Error> {
        self.0.count()?;
        let mut list = Vec::new();
        while let Some(value) = sequence.next_element_seed(BoundedValue(self.0))? {
            list.push(value);
            self.0.check_length(list.len())?;
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.count()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(BoundedValue(self.0))?;
            object.insert(key, value);
            if object.len() > self.0.limits.max_length {
                return Err(A::Error::custom(format!(
                    "an array or object holds more than {} entries, more than oomdoc reads",
                    self.0.limits.max_length
                )));
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: JsonLimits = JsonLimits {
        max_values: 100,
        max_length: 10,
    };

    #[test]
    fn same_value_as_serde_json_within_limits() {
        let text = r#"{"a":[1,-2,3.5,true,null,"x"],"b":{"c":{}}}"#;
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(from_slice(text.as_bytes(), SMALL).unwrap(), expected);
    }

    #[test]
    fn long_arrays_and_big_documents_are_refused() {
        // See: #14. A run.json with 3 million arguments took 877 MB.
        let long = format!("[{}]", ["1"; 11].join(","));
        let error = from_slice(long.as_bytes(), SMALL).unwrap_err().to_string();
        assert!(error.contains("more than 10 entries"), "{error}");
        let many = format!("[{}]", ["[1,2,3,4]"; 30].join(","));
        let limits = JsonLimits {
            max_values: 100,
            max_length: 1000,
        };
        let error = from_slice(many.as_bytes(), limits).unwrap_err().to_string();
        assert!(error.contains("more than 100 JSON values"), "{error}");
        assert!(from_slice(b"{} x", SMALL).is_err());
    }
}
