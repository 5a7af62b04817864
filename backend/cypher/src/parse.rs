//! Stage 1: text → `open-cypher` syntax tree. We do not write a parser; this module only
//! turns the parser's diagnostics into a [`CypherError`] with line and column.

use open_cypher::ast::Program;

use crate::error::{CypherError, ErrorKind, Result};

/// Longest query accepted, in bytes (the parser is linear, but LLM output can be huge).
pub const MAX_QUERY_BYTES: usize = 1 << 20;

pub fn parse(query: &str) -> Result<Program> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(CypherError::new(
            ErrorKind::Syntax { line: 1, col: 1 },
            format!("query longer than {MAX_QUERY_BYTES} bytes"),
        ));
    }
    check_nesting(query)?;
    let tokens = open_cypher::lex(query)
        .tokens
        .iter()
        .filter(|t| !t.kind.is_trivia())
        .count();
    if tokens > MAX_TOKENS {
        return Err(CypherError::new(
            ErrorKind::Syntax { line: 1, col: 1 },
            format!("query has {tokens} tokens, more than {MAX_TOKENS}"),
        ));
    }
    match open_cypher::parse(query) {
        Ok(parsed) => Ok(parsed.program),
        Err(errors) => {
            let Some(d) = errors.diagnostics().first() else {
                return Err(CypherError::new(
                    ErrorKind::Syntax { line: 1, col: 1 },
                    "cannot parse the query",
                ));
            };
            let (line, col) = line_col(query, d.primary_span.start);
            Err(CypherError::new(
                ErrorKind::Syntax { line, col },
                format!("{} [{}]", d.message, d.code),
            ))
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(text.len());
    while off > 0 && !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Most tokens accepted: bounds the depth of operator chains (`1 + 1 + …`), which nest in
/// the tree without brackets; [`crate::execute`] runs on a thread with a stack sized for it.
pub const MAX_TOKENS: usize = 20_000;

/// Deepest bracket nesting accepted. The parser, the semantic pass and the evaluator recurse
/// over the tree; a hostile `((((…` must not overflow the stack.
pub const MAX_NESTING: usize = 128;

fn check_nesting(query: &str) -> Result<()> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in query.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let (line, col) = line_col(query, i);
                    return Err(CypherError::new(
                        ErrorKind::Syntax { line, col },
                        format!("brackets nested deeper than {MAX_NESTING}"),
                    ));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}
