//! Password hashing (argon2id, the crate's default parameters: 19 MiB, t = 2) and tokens.
//! Session and invite tokens are 256-bit random values handed to the browser once; the
//! store keeps only their SHA-256, so reading the database does not let anyone log in.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use sha2::{Digest, Sha256};

/// Shortest password accepted.
pub const MIN_PASSWORD: usize = 10;
/// Longest password accepted (argon2 handles any length; this bounds the work per request).
pub const MAX_PASSWORD: usize = 256;
/// Longest e-mail address accepted, in bytes (RFC 5321's path limit less the brackets).
pub const MAX_EMAIL: usize = 254;

fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).map_err(|e| format!("no randomness from the OS: {e}"))?;
    Ok(b)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh random token (64 hex characters).
pub fn new_token() -> Result<String, String> {
    Ok(hex(&random_bytes::<32>()?))
}

/// The digest under which a token is stored.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Checks the password policy; the message is for the user.
pub fn check_password_policy(pw: &str) -> Result<(), String> {
    let n = pw.chars().count();
    if n < MIN_PASSWORD {
        return Err(format!(
            "the password must have at least {MIN_PASSWORD} characters"
        ));
    }
    if pw.len() > MAX_PASSWORD {
        return Err(format!(
            "the password must have at most {MAX_PASSWORD} bytes"
        ));
    }
    Ok(())
}

/// An argon2id PHC string for `pw`.
pub fn hash_password(pw: &str) -> Result<String, String> {
    let salt = SaltString::encode_b64(&random_bytes::<16>()?).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(pw.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("hashing failed: {e}"))
}

/// True when `pw` matches the stored PHC string.
pub fn verify_password(pw: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(h) => Argon2::default().verify_password(pw.as_bytes(), &h).is_ok(),
        Err(_) => false,
    }
}

/// A hash that matches no password, verified against when the email is unknown so that a
/// login attempt takes the same time whether or not the account exists.
pub fn dummy_hash() -> &'static str {
    static H: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    H.get_or_init(|| hash_password("no password matches this one").unwrap_or_default())
}

/// A plausible email address (one `@`, something on both sides, no spaces, bounded length).
pub fn check_email(email: &str) -> Result<(), String> {
    let ok = email.len() <= MAX_EMAIL
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && matches!(email.split_once('@'), Some((a, b)) if !a.is_empty() && b.contains('.') && !b.contains('@') && !b.starts_with('.') && !b.ends_with('.'));
    if ok {
        Ok(())
    } else {
        Err(format!("{email:?} is not an email address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_verify_and_tokens() {
        let h = hash_password("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery", &h));
        assert!(!verify_password("correct horse batterY", &h));
        assert!(!verify_password("x", "not a phc string"));
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(check_password_policy("short").is_err());
        assert!(check_password_policy("long enough pw").is_ok());
        assert!(check_email("a@b.org").is_ok());
        for bad in ["", "a", "a@b", "@b.org", "a b@c.org", "a@b@c.org", "a@.org"] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
    }
}
