//! Reading a user's input file through a size cap: a scenario or sweep file, a result
//! directory's manifest or summary. The file is read through `Read::take(cap + 1)`, so a
//! file that never ends (`/dev/zero`, a FIFO that keeps writing) or a huge one stops
//! reading one byte past the cap and is refused, instead of growing a buffer until the
//! allocation fails.
//!
//! The path `-` names standard input (`podsim run -`, `podsim check -`): it is read once,
//! through the same cap, and every later read of `-` in the same process gets the same
//! bytes (a sweep loads its scenario once per point). In messages it is called `<stdin>`.

use std::io::Read;
use std::path::Path;

/// The largest scenario or sweep file read: 16 MiB. The largest bundled scenario is a few
/// kilobytes (many pods come from `replicas`), so a bigger file is almost surely not a
/// scenario; 16 MiB of YAML still parses in well under a second.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The largest result file (`manifest.json`, `summary.json`) read whole: 256 MiB. A
/// summary grows with points x profiles x metrics (per-pod metrics: x pods); `runs.jsonl`,
/// which grows with the run count, is never read whole but line by line.
pub const MAX_RESULT_FILE_BYTES: u64 = 256 << 20;

/// The path that names standard input (and, for an output, standard output).
pub const STDIO_PATH: &str = "-";

/// What messages call standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// Whether `path` is `-`, standard input (standard output for an output file).
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == STDIO_PATH
}

/// `path` as messages name it: `<stdin>` for `-`, else the path as given.
pub fn display_name(path: &Path) -> String {
    if is_stdio(path) {
        STDIN_NAME.to_owned()
    } else {
        path.display().to_string()
    }
}

/// Standard input, read once through the cap of its first reader.
static STDIN: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();

/// A byte count as people write it (`16 MiB`).
pub fn show_bytes(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// The text of `path`, read through the cap `cap`. The error says why (an I/O error, not
/// UTF-8, or larger than the cap) without naming the file: callers put the file in front.
pub fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let buf = read_capped_bytes(path, cap)?;
    String::from_utf8(buf).map_err(|_| "the file is not UTF-8 text".to_string())
}

/// The bytes of `path`, read through the cap `cap` (see [`read_capped`]).
/// `-` reads standard input (once per process: later reads get the same bytes).
pub fn read_capped_bytes(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    if is_stdio(path) {
        return STDIN
            .get_or_init(|| take_capped(std::io::stdin().lock(), cap))
            .clone();
    }
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    take_capped(f, cap)
}

fn take_capped(r: impl Read, cap: u64) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    r.take(cap.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > cap {
        return Err(format!(
            "the file is larger than {} (the limit on input files)",
            show_bytes(cap)
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(show_bytes(MAX_INPUT_BYTES), "16 MiB");
        assert_eq!(show_bytes(MAX_RESULT_FILE_BYTES), "256 MiB");
        assert_eq!(show_bytes(1 << 30), "1 GiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
    }

    #[test]
    fn endless_input_is_refused() {
        let dev_zero = Path::new("/dev/zero");
        if dev_zero.exists() {
            let e = read_capped(dev_zero, 1000).unwrap_err();
            assert!(e.contains("larger than 1000 bytes"), "{e}");
        }
        let e = take_capped(std::io::repeat(b'x'), 10).unwrap_err();
        assert!(e.contains("larger than 10 bytes"), "{e}");
    }

    #[test]
    fn dash_is_standard_input() {
        assert!(is_stdio(Path::new("-")));
        assert!(!is_stdio(Path::new("./-")));
        assert_eq!(display_name(Path::new("-")), "<stdin>");
        assert_eq!(display_name(Path::new("a/b.yaml")), "a/b.yaml");
    }
}
