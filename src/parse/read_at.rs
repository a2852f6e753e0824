//! Reading a file by offset, as several threads may do at once.

use std::fs::File;
use std::io;

/// Reads into `buffer` from `offset` of `file` until the buffer is full or the file ends,
/// without moving the file's position on Unix (several threads may read one file so); returns
/// the bytes read.
pub fn read_full_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let at = offset + filled as u64;
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(file, &mut buffer[filled..], at);
        #[cfg(windows)]
        let read = std::os::windows::fs::FileExt::seek_read(file, &mut buffer[filled..], at);
        #[cfg(not(any(unix, windows)))]
        let read: io::Result<usize> = Err(io::ErrorKind::Unsupported.into());
        match read {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_an_offset_up_to_the_end() {
        let mut file = tempfile::tempfile().expect("a temporary file");
        io::Write::write_all(&mut file, b"0123456789").expect("written");
        let mut buffer = [0u8; 4];
        assert_eq!(read_full_at(&file, &mut buffer, 3).ok(), Some(4));
        assert_eq!(&buffer, b"3456");
        assert_eq!(read_full_at(&file, &mut buffer, 8).ok(), Some(2));
        assert_eq!(&buffer[..2], b"89");
        assert_eq!(read_full_at(&file, &mut buffer, 10).ok(), Some(0));
        assert_eq!(read_full_at(&file, &mut buffer, 99).ok(), Some(0));
    }
}
