//! Progress bars for long jobs (indicatif). Hidden when stderr is not a terminal or when the
//! caller asks for quiet, so tests and CI logs stay clean.

use std::io::Read;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over a byte count (reading a file).
pub fn bytes_bar(total: u64, what: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:24} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A bar over a count of items.
pub fn count_bar(total: u64, what: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:24} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A spinner for work of unknown size.
pub fn spinner(what: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(what.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// Counts the bytes read through it into a progress bar (compressed bytes for gzip files, so
/// the bar tracks the file on disk).
pub struct CountingReader<R> {
    inner: R,
    bar: ProgressBar,
}

impl<R> CountingReader<R> {
    pub fn new(inner: R, bar: ProgressBar) -> Self {
        CountingReader { inner, bar }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}
