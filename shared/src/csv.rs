//! CSV cells for files people open in spreadsheets: quoting, and neutralising text that a
//! spreadsheet would run as a formula (CSV injection).
//!
//! A text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading
//! `'`, which spreadsheets show as text. Cells that are plain numbers (`-0.25`, `+3`, `1e-3`)
//! are left alone: they cannot be formulas and must stay numbers. Then a cell containing a
//! comma, a quote, a newline or a carriage return is quoted with doubled inner quotes.

/// A text cell made safe to open in a spreadsheet (see the module docs), not yet quoted: for
/// writers that quote by themselves (the `csv` crate).
pub fn neutralise(s: &str) -> String {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let number = s.trim().parse::<f64>().is_ok_and(f64::is_finite) && !s.starts_with(['\t', '\r']);
    let s = if risky && !number {
        format!("'{s}")
    } else {
        s.to_string()
    };
    after_separators(&s)
}

/// A spreadsheet set to split on `;` (or a tab) cuts `x;=1+1` into two cells, the second a
/// formula: a formula character after a `;` or a tab (and any spaces) gets a `'` too.
fn after_separators(s: &str) -> String {
    if !s.contains([';', '\t']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 4);
    let mut after_sep = false;
    for c in s.chars() {
        if after_sep && ['=', '+', '-', '@'].contains(&c) {
            out.push('\'');
        }
        if c == ';' || c == '\t' {
            after_sep = true;
        } else if c != ' ' {
            after_sep = false;
        }
        out.push(c);
    }
    out
}

/// One CSV cell: neutralised (see the module docs), then quoted if needed.
pub fn cell(s: &str) -> String {
    let s = neutralise(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn formulas_are_neutralised_numbers_kept() {
        assert_eq!(
            cell("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(cell("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
        assert_eq!(cell("-2+3"), "'-2+3");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        // The tab also splits a tab-separated import: the formula after it is neutralised too.
        assert_eq!(cell("\t=1"), "'\t'=1");
        assert_eq!(cell("\r=1"), "\"'\r=1\"");
        assert_eq!(cell("-0.25"), "-0.25");
        assert_eq!(cell("+3"), "+3");
        assert_eq!(cell("1e-3"), "1e-3");
        assert_eq!(cell("-inf"), "'-inf");
        assert_eq!(cell("aspirin, low dose"), "\"aspirin, low dose\"");
        assert_eq!(cell("plain"), "plain");
        // `;`-separated spreadsheets split at `;`: every piece is neutralised.
        assert_eq!(cell("x;=1+1;"), "x;'=1+1;");
        assert_eq!(cell("a; -2+3;\t@SUM(A1)"), "a; '-2+3;\t'@SUM(A1)");
        assert_eq!(cell("dose; 5 mg"), "dose; 5 mg");
        assert_eq!(cell(""), "");
    }
}
