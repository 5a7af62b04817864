//! A view's state in the address bar: query parameters read once when a view starts and
//! written back (with `history.replaceState`, so moving a slider adds no history entry) when
//! the state changes. Opening the address in a new page reproduces the view.
//!
//! Entity pages use: `w=α,β,γ` (RNS weights), `blend`, `pmin` (plausibility percentile at
//! least), `class` and `cmode` (`include` / `exclude`), `mech` (`new` / `obvious`), `sort`, the
//! first screen's rule where it differs from the server's (`band`, `newmech=0|1`,
//! `flagged=inplace|last`), and `why` (the candidate whose explanation is open,
//! `Type::identifier`).

/// The current value of query parameter `name`.
pub fn get(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// Sets (`Some`) or removes (`None`) query parameters, keeping the others and the path.
pub fn set(changes: &[(&str, Option<String>)]) {
    let Some(w) = web_sys::window() else { return };
    let loc = w.location();
    let (Ok(path), Ok(search)) = (loc.pathname(), loc.search()) else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    for (k, v) in changes {
        match v {
            Some(v) => params.set(k, v),
            None => params.delete(k),
        }
    }
    let q = String::from(params.to_string());
    let url = if q.is_empty() {
        path
    } else {
        format!("{path}?{q}")
    };
    let hash = loc.hash().unwrap_or_default();
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{url}{hash}")),
        );
    }
}

/// A number for the address: the shortest text that reads back as the same `f64` (`0.35`,
/// `-1`, `0.32170000000000004`), so a link reproduces the view exactly.
pub fn num(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else {
        x.to_string()
    }
}

/// A finite number from the address, clamped to `[lo, hi]`.
pub fn parse_num(s: &str, lo: f64, hi: f64) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(|x| x.clamp(lo, hi))
}
