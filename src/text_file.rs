//! Reading an input file (a card, a scenario, a sweep, a graph): UTF-8 text of bounded size, so a
//! wrong path (`/dev/zero`, a disk image) is bad input naming the file, never an exhausted memory.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// The largest input file read, in bytes (64 MiB: the largest explicit instance the size
/// limits admit is a few MiB of TOML).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The text of the file at `path`.
///
/// # Errors
/// [`Error::InputFile`] (bad input) when it cannot be opened or is a folder; [`Error::Io`] when
/// reading fails; [`Error::Parse`] naming it when it is larger than [`MAX_INPUT_BYTES`] or is
/// not UTF-8 text.
pub fn read_text(path: &Path) -> Result<String> {
    let what = path.display().to_string();
    let io = |e: std::io::Error| match e.kind() {
        // A folder given as a file reads as this error on Linux (it opens).
        std::io::ErrorKind::IsADirectory => Error::InputFile { path: what.clone(), source: e },
        _ => Error::Io { path: what.clone(), source: e },
    };
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| Error::InputFile { path: what.clone(), source: e })?;
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::parse(what, format!("larger than {} MiB (allowed: a TOML file up to that size)", MAX_INPUT_BYTES >> 20)));
    }
    String::from_utf8(bytes).map_err(|_| Error::parse(what, "not UTF-8 text (a TOML file is expected)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_or_binary_file_is_bad_input_naming_it() {
        let zero = read_text(Path::new("/dev/zero")).expect_err("/dev/zero has no end");
        assert!(zero.is_bad_input() && zero.to_string().contains("/dev/zero") && zero.to_string().contains("64 MiB"), "{zero}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let binary = dir.join("binary.toml");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let err = read_text(&binary).expect_err("not UTF-8");
        assert!(err.is_bad_input() && err.to_string().contains("not UTF-8"), "{err}");
        // A missing file or a folder is bad input naming it. Control: a text file is read whole.
        for bad in [dir.join("missing.toml"), dir.to_path_buf()] {
            let err = read_text(&bad).expect_err("not a readable file");
            assert!(err.is_bad_input() && err.to_string().contains(&bad.display().to_string()), "{err}");
        }
        let text = dir.join("ok.toml");
        std::fs::write(&text, "a = 1\n").unwrap();
        assert_eq!(read_text(&text).unwrap(), "a = 1\n");
    }
}
