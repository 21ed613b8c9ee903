//! Reading lines with a bound: a driver that writes an endless line cannot grow memory.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The next line without its `\n` (`None` at the end). Past `max` bytes the rest of the
/// line is skipped, and what was kept is returned: `max + 1` bytes, so that a line longer
/// than `max` is told from one of exactly `max`.
pub async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let mut read_any = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(read_any.then_some(line));
        }
        read_any = true;
        let (used, ended) = take(&mut line, buffer, max);
        reader.consume(used);
        if ended {
            return Ok(Some(line));
        }
    }
}

/// [`read_line`] on a blocking reader (a thread of its own watches each driver pipe).
pub fn read_line_blocking(
    reader: &mut impl std::io::BufRead,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let mut read_any = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(read_any.then_some(line));
        }
        read_any = true;
        let (used, ended) = take(&mut line, buffer, max);
        reader.consume(used);
        if ended {
            return Ok(Some(line));
        }
    }
}

/// Adds what `buffer` holds of the current line to `line`, keeping at most `max + 1` bytes:
/// how many bytes of `buffer` the line used (its `\n` included), and whether it ended there.
fn take(line: &mut Vec<u8>, buffer: &[u8], max: usize) -> (usize, bool) {
    let (chunk, found) = match buffer.iter().position(|b| *b == b'\n') {
        Some(at) => (&buffer[..at], Some(at)),
        None => (buffer, None),
    };
    let room = (max + 1).saturating_sub(line.len());
    line.extend_from_slice(&chunk[..chunk.len().min(room)]);
    (
        found.map(|at| at + 1).unwrap_or(buffer.len()),
        found.is_some(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_and_an_endless_one_is_cut() {
        let input: &[u8] = b"first\nsecond that is long\nlast\nsix ch\n";
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        assert_eq!(
            read_line(&mut reader, 100).await.unwrap().unwrap(),
            b"first"
        );
        assert_eq!(
            read_line(&mut reader, 6).await.unwrap().unwrap(),
            b"second "
        );
        assert_eq!(read_line(&mut reader, 100).await.unwrap().unwrap(), b"last");
        assert_eq!(read_line(&mut reader, 6).await.unwrap().unwrap(), b"six ch");
        assert_eq!(read_line(&mut reader, 100).await.unwrap(), None);
        let mut blocking = std::io::BufReader::with_capacity(4, input);
        assert_eq!(
            read_line_blocking(&mut blocking, 6).unwrap().unwrap(),
            b"first"
        );
        assert_eq!(
            read_line_blocking(&mut blocking, 6).unwrap().unwrap(),
            b"second "
        );
    }
}
