//! Security headers on every response: the Content-Security-Policy of the Leptos/WASM app,
//! `X-Content-Type-Options: nosniff`, and (set in [`super::router`]) the cross-origin
//! isolation headers COOP/COEP/CORP.
//!
//! The policy allows only this origin: scripts from `'self'` plus `'wasm-unsafe-eval'`
//! (compiling the app's WebAssembly) plus the SHA-256 of each inline script of the served
//! `index.html` (Trunk writes one inline module script that imports and starts the app; its
//! hash changes with every build, so it is computed from the file at start-up, never
//! hard-coded). Styles may be inline (`'unsafe-inline'` for style attributes the views set);
//! `connect-src 'self'` covers fetch and the Ask event stream; `frame-ancestors 'none'` forbids
//! framing; `object-src`/`base-uri` are `'none'`.

use std::path::Path;

use base64::Engine;
use sha2::{Digest, Sha256};

/// The bodies of the inline `<script>` elements (those without `src`) of an HTML page.
pub fn inline_scripts(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(tag_end) = after.find('>') else {
            break;
        };
        let tag = &after[..tag_end];
        let body_start = tag_end + 1;
        let Some(close) = after[body_start..].find("</script") else {
            break;
        };
        let body = &after[body_start..body_start + close];
        if !tag.contains(" src=") {
            out.push(body);
        }
        rest = &after[body_start + close..];
    }
    out
}

/// `'sha256-…'` source expressions for the inline scripts of `index.html`.
pub fn script_hashes(html: &str) -> Vec<String> {
    inline_scripts(html)
        .into_iter()
        .map(|s| {
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s.as_bytes()))
            )
        })
        .collect()
}

/// The Content-Security-Policy for the app served from `dist` (its `index.html` is read once;
/// without one, no inline script is allowed).
pub fn content_security_policy(dist: &Path) -> String {
    let html = std::fs::read_to_string(dist.join("index.html")).unwrap_or_default();
    policy(&script_hashes(&html))
}

pub fn policy(hashes: &[String]) -> String {
    let mut script = String::from("'self' 'wasm-unsafe-eval'");
    for h in hashes {
        script.push(' ');
        script.push_str(h);
    }
    format!(
        "default-src 'self'; script-src {script}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_only_inline_scripts() {
        let html = "<head><script type=\"module\">import init from '/a.js';\nawait init();</script><script src=\"/x.js\"></script><script>alert(1)</script></head>";
        assert_eq!(
            inline_scripts(html),
            ["import init from '/a.js';\nawait init();", "alert(1)"]
        );
        // echo -n 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            script_hashes("<script>alert(1)</script>"),
            ["'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"]
        );
        let p = policy(&script_hashes(html));
        assert!(
            p.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-")
                && p.contains("frame-ancestors 'none'"),
            "{p}"
        );
        assert!(!p.contains("'unsafe-eval'") && !p.contains("script-src 'self' 'unsafe-inline'"));
    }
}
