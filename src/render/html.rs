//! Shared pieces of self-contained HTML output: escaping and the page shell. No external
//! loads: inline CSS and SVG only, every string escaped.

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// Common CSS of oomdoc's HTML pages.
pub const BASE_CSS: &str = "body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1d2430;background:#fff}h1,h2,h3{line-height:1.2}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #d0d6de;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f1f4f8}td.num{text-align:right;font-variant-numeric:tabular-nums}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}pre{background:#f6f8fa;padding:.8em;overflow-x:auto}.bad{color:#b42318}.good{color:#067647}.warn{color:#b54708}.dim{color:#667085}.source{color:#667085;font-size:.85em}";

/// Wraps a body in a complete, self-contained HTML page. `title` is escaped; `body` must
/// already be escaped HTML; `extra_css` is appended to the base CSS.
pub fn page(title: &str, extra_css: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{}{}</style>\n</head>\n<body>\n{}\n</body>\n</html>\n",
        escape(title),
        BASE_CSS,
        extra_css,
        body
    )
}

/// Escapes prose and turns `literal` spans into `<code>` (after escaping, so nothing in the
/// text can become markup).
pub fn prose(text: &str) -> String {
    let escaped = escape(text);
    let parts: Vec<&str> = escaped.split('`').collect();
    if parts.len() < 3 || parts.len() % 2 == 0 {
        return escaped;
    }
    let mut html = String::with_capacity(escaped.len() + 16);
    for (index, part) in parts.iter().enumerate() {
        if index % 2 == 1 {
            html.push_str("<code>");
            html.push_str(part);
            html.push_str("</code>");
        } else {
            html.push_str(part);
        }
    }
    html
}

/// A table: the header cells escaped, each cell as prose (code spans kept).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut html = String::from("<table><tr>");
    for cell in header {
        html.push_str(&format!("<th>{}</th>", escape(cell)));
    }
    html.push_str("</tr>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            html.push_str(&format!("<td>{}</td>", prose(cell)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>\n");
    html
}

/// A list, numbered or not, each item as prose (code spans kept).
pub fn list(items: &[String], ordered: bool) -> String {
    let tag = if ordered { "ol" } else { "ul" };
    let mut html = format!("<{tag}>");
    for item in items {
        html.push_str(&format!("<li>{}</li>", prose(item)));
    }
    html.push_str(&format!("</{tag}>\n"));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
