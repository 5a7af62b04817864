//! Server-sent events read over `fetch` rather than `EventSource`: an `EventSource` that is
//! refused only fires a bare `error` event, while a fetch shows the refusal's status, its
//! `Retry-After` and its JSON body — what the page needs to say why and when to try again.
//! (It also never reconnects by itself, so a failed question is not asked twice.)

use gloo_net::http::Request;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::refusal::Refusal;

/// Opens `url` as an event stream and calls `on_data` with each event's `data` (multi-line
/// data joined by `\n`; comments and keep-alives skipped) until the stream ends. `Err` when the
/// server refused (status ≠ 2xx), could not be reached, or the connection broke; a stream
/// aborted through `signal` ends with `Err` too, which the caller ignores.
pub async fn events(
    url: &str,
    signal: Option<&web_sys::AbortSignal>,
    mut on_data: impl FnMut(&str),
) -> Result<(), Refusal> {
    let resp = Request::get(url)
        .header("Accept", "text/event-stream")
        .abort_signal(signal)
        .send()
        .await
        .map_err(|_| Refusal::unreachable())?;
    if !resp.ok() {
        return Err(super::refusal_of(resp).await);
    }
    let Some(body) = resp.body() else {
        return Err(Refusal::lost());
    };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|_| Refusal::lost())?;
        let done = js_sys::Reflect::get(&chunk, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        if let Ok(value) = js_sys::Reflect::get(&chunk, &"value".into()) {
            if let Some(bytes) = value.dyn_ref::<js_sys::Uint8Array>() {
                pending.extend(bytes.to_vec());
            }
        }
        while let Some((block, rest)) = split_event(&pending) {
            if let Some(data) = event_data(&String::from_utf8_lossy(block)) {
                on_data(&data);
            }
            pending = rest.to_vec();
        }
    }
    if let Some(data) = event_data(&String::from_utf8_lossy(&pending)) {
        on_data(&data);
    }
    Ok(())
}

/// The first complete event in `buf` (up to a blank line) and what follows it.
fn split_event(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut i = 0;
    while i + 1 < buf.len() {
        match (buf[i], buf[i + 1]) {
            (b'\n', b'\n') => return Some((&buf[..i], &buf[i + 2..])),
            (b'\r', b'\n') if buf.get(i + 2..i + 4) == Some(b"\r\n") => {
                return Some((&buf[..i], &buf[i + 4..]))
            }
            _ => i += 1,
        }
    }
    None
}

/// The `data` of one event block (`None` for a comment or keep-alive).
fn event_data(block: &str) -> Option<String> {
    let lines: Vec<&str> = block
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}
