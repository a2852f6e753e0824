//! Opcode names and the scalar values read from payloads.

use std::rc::Rc;

use super::Value;

/// The name of an opcode byte, for messages.
pub(super) fn opcode_name(op: u8) -> &'static str {
    match op {
        0x80 => "PROTO",
        0x95 => "FRAME",
        b'.' => "STOP",
        b'(' => "MARK",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'}' => "EMPTY_DICT",
        b']' => "EMPTY_LIST",
        b')' => "EMPTY_TUPLE",
        b'd' => "DICT",
        b'l' => "LIST",
        b't' => "TUPLE",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        b'a' => "APPEND",
        b'e' => "APPENDS",
        b's' => "SETITEM",
        b'u' => "SETITEMS",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        0x94 => "MEMOIZE",
        b'h' => "BINGET",
        b'j' => "LONG_BINGET",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'M' => "BININT2",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'G' => "BINFLOAT",
        0x8c => "SHORT_BINUNICODE",
        b'X' => "BINUNICODE",
        0x8d => "BINUNICODE8",
        b'C' => "SHORT_BINBYTES",
        b'B' => "BINBYTES",
        0x8e => "BINBYTES8",
        0x96 => "BYTEARRAY8",
        b'N' => "NONE",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        _ => "opcode",
    }
}

pub(super) fn str_value(bytes: &[u8]) -> Value {
    // Valid UTF-8 (nearly every str) is checked by the faster whole-slice validation; the
    // lossy decoding, which gives the same text for it, only where that fails.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    };
    Value::Str(Rc::new(text))
}

pub(super) fn bytes_value(bytes: &[u8]) -> Value {
    Value::Bytes(Rc::new(bytes.to_vec()))
}

/// A little-endian two's-complement integer of at most 8 bytes (built in a register: a
/// byte copy into an array and an 8-byte load back stalls on store forwarding).
#[inline]
pub(super) fn small_long(bytes: &[u8]) -> i64 {
    let len = bytes.len().min(8);
    let mut value = 0u64;
    for (position, &byte) in bytes.iter().take(len).enumerate() {
        value |= u64::from(byte) << (8 * position);
    }
    let negative = len > 0 && bytes[len - 1] & 0x80 != 0;
    if negative && len < 8 {
        value |= u64::MAX << (8 * len);
    }
    value as i64
}

/// A little-endian two's-complement integer (LONG1/LONG4).
pub(super) fn long_value(bytes: &[u8]) -> Value {
    if bytes.len() <= 8 {
        Value::Int(small_long(bytes))
    } else {
        Value::BigInt(Rc::new(bytes.to_vec()))
    }
}
