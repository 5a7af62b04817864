//! Precompressed static assets: `serve` writes a brotli (`.br`) and a gzip (`.gz`) copy beside
//! every compressible file of the Trunk output (`dist/`) whose copy is missing or older than
//! the file, so the browser downloads the 1.3 MB WebAssembly bundle as ~0.4 MB without the
//! server compressing it per request (the static service picks the copy from
//! `Accept-Encoding`). A read-only `dist` is not an error: the files are then served as they
//! are, and the reason is printed once.

use std::io::Write;
use std::path::{Path, PathBuf};

/// File kinds worth compressing (text and WebAssembly; images are compressed already).
const COMPRESSIBLE: [&str; 8] = ["wasm", "js", "css", "html", "svg", "json", "txt", "map"];
/// Files smaller than this are sent as they are.
const MIN_BYTES: u64 = 1024;

/// What [`precompress`] did.
#[derive(Debug, Default)]
pub struct Summary {
    pub files: usize,
    pub written: usize,
    pub bytes_in: u64,
    pub bytes_br: u64,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        if e.file_type()?.is_dir() {
            walk(&p, out)?;
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| COMPRESSIBLE.contains(&x))
            && e.metadata()?.len() >= MIN_BYTES
        {
            out.push(p);
        }
    }
    Ok(())
}

fn fresh(copy: &Path, src_modified: std::time::SystemTime) -> bool {
    std::fs::metadata(copy)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= src_modified)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|x| x.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Writes missing or stale `.br` / `.gz` copies of the compressible files under `dist`.
pub fn precompress(dist: &Path) -> std::io::Result<Summary> {
    let mut files = Vec::new();
    walk(dist, &mut files)?;
    files.sort();
    let mut s = Summary {
        files: files.len(),
        ..Default::default()
    };
    for f in files {
        let meta = std::fs::metadata(&f)?;
        let modified = meta.modified()?;
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let br = f.with_file_name(format!("{name}.br"));
        let gz = f.with_file_name(format!("{name}.gz"));
        s.bytes_in += meta.len();
        if fresh(&br, modified) && fresh(&gz, modified) {
            s.bytes_br += std::fs::metadata(&br).map(|m| m.len()).unwrap_or(0);
            continue;
        }
        let data = std::fs::read(&f)?;
        let mut out = Vec::with_capacity(data.len() / 3);
        {
            let params = brotli::enc::BrotliEncoderParams {
                quality: 11,
                lgwin: 22,
                ..Default::default()
            };
            brotli::BrotliCompress(&mut &data[..], &mut out, &params)?;
        }
        s.bytes_br += out.len() as u64;
        write_atomic(&br, &out)?;
        let mut z = flate2::write::GzEncoder::new(
            Vec::with_capacity(data.len() / 3),
            flate2::Compression::best(),
        );
        z.write_all(&data)?;
        write_atomic(&gz, &z.finish()?)?;
        s.written += 1;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn copies_decompress_to_the_file_and_are_rewritten_only_when_stale() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text: String = (0..4000)
            .map(|i| format!("line {i} of the bundle\n"))
            .collect();
        std::fs::create_dir_all(dir.path().join("public")).expect("mkdir");
        std::fs::write(dir.path().join("app.js"), &text).expect("write");
        std::fs::write(dir.path().join("public/tiny.css"), "a{}").expect("write");
        std::fs::write(dir.path().join("logo.png"), vec![7u8; 5000]).expect("write");
        let s = precompress(dir.path()).expect("precompress");
        assert_eq!(
            (s.files, s.written),
            (1, 1),
            "only the compressible, non-tiny file"
        );
        let mut br = Vec::new();
        brotli::BrotliDecompress(
            &mut std::fs::File::open(dir.path().join("app.js.br")).expect("br"),
            &mut br,
        )
        .expect("brotli");
        assert_eq!(br, text.as_bytes());
        let mut gz = String::new();
        flate2::read::GzDecoder::new(
            std::fs::File::open(dir.path().join("app.js.gz")).expect("gz"),
        )
        .read_to_string(&mut gz)
        .expect("gzip");
        assert_eq!(gz, text);
        assert!(s.bytes_br * 5 < s.bytes_in, "{s:?}");
        assert!(
            !dir.path().join("logo.png.br").exists()
                && !dir.path().join("public/tiny.css.br").exists()
        );
        assert_eq!(
            precompress(dir.path()).expect("again").written,
            0,
            "fresh copies are kept"
        );
    }
}
