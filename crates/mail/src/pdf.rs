//! The text layer of a PDF attachment: where a bill's digitable line and Pix
//! code are printed. Pure: bytes in, text or the reason there is none out.
//!
//! Parsing and text extraction are `lopdf`'s. It inflates streams without a
//! bound and parses nested arrays by recursion, so nothing reaches it before
//! `guard` has walked the file itself:
//!
//! - every stream is inflated here first, each layer of a chain of filters
//!   (`FlateDecode`, `LZWDecode`), into a counter with a budget of
//!   `MAX_INFLATED_BYTES` for the whole file: a decompression bomb stops at
//!   the budget, in bounded memory, and the file is refused;
//! - arrays and dictionaries nested deeper than `MAX_DEPTH`, in the file or in
//!   an inflated stream, are refused (a thousand-deep `[[[…` would overflow
//!   the parser's stack, and a stack overflow ends the process: no unwinding
//!   can catch it);
//! - a file with an `/Encrypt` entry is not read at all (`Unread::Encrypted`),
//!   even one that opens without a password: decryption would come before the
//!   guard could see the streams.
//!
//! Then at most `MAX_PAGES` pages (more: refused, no bill has them) are read
//! one by one, a page that fails skipped, until `MAX_TEXT_BYTES` of text or
//! `TIME_BUDGET`; a panic in the library is caught and is `Unreadable`.
//!
//! Not read: images (a scanned bill has no text layer: `NoText`; no OCR),
//! form fields, annotations, embedded files.

use std::io::Read;
use std::time::{Duration, Instant};

/// The most bytes all of a file's streams may inflate to, together.
pub const MAX_INFLATED_BYTES: usize = 64 * 1024 * 1024;
/// The most pages a readable PDF has.
pub const MAX_PAGES: usize = 100;
/// The deepest nesting of arrays and dictionaries read.
pub const MAX_DEPTH: usize = 64;
/// The most text kept from one PDF.
pub const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Past this, no further page is read (what was read is kept).
pub const TIME_BUDGET: Duration = Duration::from_secs(2);

/// Why a PDF gave no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// Pages, but no text on them: a scan (images only).
    NoText,
    /// The file is encrypted.
    Encrypted,
    /// Not a PDF, broken, or past a bound (what, for the logs).
    Unreadable(String),
}

impl Unread {
    /// The reason as the e-mail's record names it.
    pub fn reason(&self) -> &'static str {
        match self {
            Unread::NoText => "pdf_no_text",
            Unread::Encrypted => "pdf_encrypted",
            Unread::Unreadable(_) => "pdf_unreadable",
        }
    }
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::NoText => f.write_str("the PDF has no text layer (a scan?)"),
            Unread::Encrypted => f.write_str("the PDF is encrypted"),
            Unread::Unreadable(why) => write!(f, "the PDF cannot be read: {why}"),
        }
    }
}

/// Whether bytes are a PDF (its header within the first kilobyte, as
/// readers accept).
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.get(..1024.min(bytes.len())).is_some_and(|head| find(head, b"%PDF-").is_some())
}

/// The text of a PDF's pages, in order.
pub fn text(pdf: &[u8]) -> Result<String, Unread> {
    if !is_pdf(pdf) {
        return Err(Unread::Unreadable("no %PDF- header".into()));
    }
    guard(pdf)?;
    // lopdf may panic on hostile input; the guard above keeps the panics it
    // cannot catch (stack overflows) out, this catches the rest.
    let document = std::panic::catch_unwind(|| lopdf::Document::load_mem(pdf))
        .map_err(|_| Unread::Unreadable("the parser failed".into()))?
        .map_err(|e| Unread::Unreadable(e.to_string()))?;
    let pages = document.get_pages();
    if pages.len() > MAX_PAGES {
        return Err(Unread::Unreadable(format!("{} pages, more than {MAX_PAGES}", pages.len())));
    }
    if pages.is_empty() {
        return Err(Unread::Unreadable("no pages".into()));
    }
    let started = Instant::now();
    let mut text = String::new();
    for number in pages.keys() {
        // The document is only read: a panic half-way leaves nothing broken.
        let read = std::panic::AssertUnwindSafe(|| document.extract_text_chunks(&[*number]));
        let chunks = std::panic::catch_unwind(read).unwrap_or_default();
        for chunk in chunks.into_iter().flatten() {
            text.push_str(&chunk);
        }
        text.push('\n');
        if text.len() >= MAX_TEXT_BYTES || started.elapsed() > TIME_BUDGET {
            break;
        }
    }
    if text.len() > MAX_TEXT_BYTES {
        text.truncate(text.floor_char_boundary(MAX_TEXT_BYTES));
    }
    if text.chars().all(char::is_whitespace) {
        return Err(Unread::NoText);
    }
    Ok(text)
}

/// Walks the file as `text` says: streams inflated within the budget,
/// nesting bounded, encryption found.
fn guard(pdf: &[u8]) -> Result<(), Unread> {
    let mut budget = MAX_INFLATED_BYTES;
    let mut rest = pdf;
    loop {
        // The bytes before the next stream: dictionaries, arrays, the trailer.
        let (outside, stream) = match find(rest, b"stream") {
            // `endstream` is not the start of a stream.
            Some(at) if at >= 3 && rest.get(at - 3..at) == Some(b"end") => {
                let (outside, after) = rest.split_at(at + 6);
                check_outside(outside)?;
                rest = after;
                continue;
            }
            Some(at) => (rest.get(..at).unwrap_or_default(), rest.get(at + 6..).unwrap_or_default()),
            None => (rest, &[][..]),
        };
        check_outside(outside)?;
        if stream.is_empty() {
            return Ok(());
        }
        let data = stream.strip_prefix(b"\r\n").or_else(|| stream.strip_prefix(b"\n")).unwrap_or(stream);
        let end = find(data, b"endstream").unwrap_or(data.len());
        let (content, after) = data.split_at(end);
        // The filters named just before, in the stream's dictionary.
        let dict = outside.get(outside.len().saturating_sub(4096)..).unwrap_or_default();
        let lzw = find(dict, b"/LZW").is_some();
        inflate_layers(content, lzw, &mut budget)?;
        rest = after;
    }
}

/// Nesting and encryption in the bytes outside streams.
fn check_outside(bytes: &[u8]) -> Result<(), Unread> {
    if find(bytes, b"/Encrypt").is_some() {
        return Err(Unread::Encrypted);
    }
    check_depth(bytes)
}

/// The deepest nesting of `[` and `<<`, strings and comments skipped. A
/// byte no PDF token holds outside a string (a control character, a byte
/// over 0x7f) ends what a parser could read as one nest: depth starts again
/// from zero, so the random bytes of an image cannot add up to a refusal.
fn check_depth(bytes: &[u8]) -> Result<(), Unread> {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            0x80.. | 0x01..=0x08 | 0x0b | 0x0e..=0x1f | 0x7f => depth = 0,
            b'[' => depth += 1,
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 1;
            }
            b']' => depth = depth.saturating_sub(1),
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'(' => i = skip_string(bytes, i),
            b'%' => {
                while bytes.get(i).is_some_and(|&c| c != b'\n' && c != b'\r') {
                    i += 1;
                }
            }
            _ => {}
        }
        if depth > MAX_DEPTH {
            return Err(Unread::Unreadable(format!("nested deeper than {MAX_DEPTH}")));
        }
        i += 1;
    }
    Ok(())
}

/// The index of a literal string's closing parenthesis (balanced, escapes
/// skipped), or the end.
fn skip_string(bytes: &[u8], open: usize) -> usize {
    let mut level = 0usize;
    let mut i = open;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'(' => level += 1,
            b')' => {
                level = level.saturating_sub(1);
                if level == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Inflates a stream layer by layer (a layer's output that is itself
/// compressed is inflated again, as a chain of filters would be), charging
/// every byte to the budget and checking each layer's nesting.
fn inflate_layers(content: &[u8], lzw: bool, budget: &mut usize) -> Result<(), Unread> {
    check_depth(content)?;
    let mut layer = if lzw { lzw_inflate(content, budget)? } else { zlib_inflate(content, budget)? };
    for _ in 0..4 {
        let Some(bytes) = layer else { return Ok(()) };
        check_depth(&bytes)?;
        layer = zlib_inflate(&bytes, budget)?;
    }
    Ok(())
}

/// A zlib stream's bytes, within the budget; `None` when it is none.
fn zlib_inflate(input: &[u8], budget: &mut usize) -> Result<Option<Vec<u8>>, Unread> {
    // A zlib header: deflate, a window size, and its check.
    let is_zlib =
        matches!(input, [cmf, flg, ..] if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0);
    if !is_zlib {
        return Ok(None);
    }
    let mut decoder = flate2::read::ZlibDecoder::new(input);
    let mut buffer = vec![0u8; 32 * 1024];
    let mut out = Inflated::new(budget);
    loop {
        match decoder.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => out.add(buffer.get(..n).unwrap_or_default())?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A broken stream: lopdf keeps what inflated so far, and so is it
            // counted here.
            Err(_) => break,
        }
    }
    out.finish().map(Some)
}

/// An LZW stream's bytes, within the budget.
fn lzw_inflate(input: &[u8], budget: &mut usize) -> Result<Option<Vec<u8>>, Unread> {
    let mut decoder = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let mut out = Inflated::new(budget);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut input = input;
    loop {
        let result = decoder.decode_bytes(input, &mut buffer);
        out.add(buffer.get(..result.consumed_out).unwrap_or_default())?;
        input = input.get(result.consumed_in..).unwrap_or_default();
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in > 0 || result.consumed_out > 0 => {}
            _ => break,
        }
    }
    out.finish().map(Some)
}

/// The most bytes of one piece of `Inflated`.
const PIECE: usize = 1024 * 1024;

/// A stream's inflated bytes as they come, in pieces of about `PIECE` bytes
/// that are never moved, each charged to the budget as it comes: a stream
/// stopped at the budget has held about the budget. One growing buffer held
/// up to three times as much (each doubling copies into a new block while
/// the old one lives, and the allocator keeps freed blocks a while): a bomb
/// refused at 64 MiB peaked at 200 MiB (`make bench`, the mail section).
struct Inflated<'a> {
    pieces: Vec<Vec<u8>>,
    len: usize,
    budget: &'a mut usize,
}

impl<'a> Inflated<'a> {
    fn new(budget: &'a mut usize) -> Self {
        Inflated { pieces: Vec::new(), len: 0, budget }
    }

    fn add(&mut self, bytes: &[u8]) -> Result<(), Unread> {
        self.len += bytes.len();
        if self.len > *self.budget {
            return Err(too_much());
        }
        match self.pieces.last_mut() {
            Some(piece) if piece.len() + bytes.len() <= PIECE => piece.extend_from_slice(bytes),
            _ => self.pieces.push(bytes.to_vec()),
        }
        Ok(())
    }

    /// The bytes in one buffer (a stream within the budget), charged.
    fn finish(mut self) -> Result<Vec<u8>, Unread> {
        charge(self.len, self.budget)?;
        Ok(if self.pieces.len() <= 1 { self.pieces.pop().unwrap_or_default() } else { self.pieces.concat() })
    }
}

fn charge(bytes: usize, budget: &mut usize) -> Result<(), Unread> {
    *budget = budget.checked_sub(bytes).ok_or_else(too_much)?;
    Ok(())
}

fn too_much() -> Unread {
    Unread::Unreadable(format!("its streams inflate to more than {MAX_INFLATED_BYTES} bytes"))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A one-page PDF whose content stream is `content` (raw, or deflated).
    fn pdf(content: &[u8], deflate: bool) -> Vec<u8> {
        if deflate {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(content).unwrap();
            with_stream(e.finish().unwrap(), "/Filter /FlateDecode ")
        } else {
            with_stream(content.to_vec(), "")
        }
    }

    fn with_stream(stream: Vec<u8>, filter: &str) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        let objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_vec(),
            [format!("<< {filter}/Length {} >>\nstream\n", stream.len()).into_bytes(), stream, b"\nendstream".to_vec()].concat(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        ];
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend(format!("{} 0 obj\n", i + 1).into_bytes());
            out.extend(body);
            out.extend(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).into_bytes());
        for o in offsets {
            out.extend(format!("{o:010} 00000 n \n").into_bytes());
        }
        out.extend(
            format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).into_bytes(),
        );
        out
    }

    const LINE: &str = "34191.09123 34567.800007 01234.567897 1 16560000015990";

    #[test]
    fn reads_the_text_layer_plain_and_deflated() {
        for deflate in [false, true] {
            let content = format!("BT /F1 12 Tf 72 700 Td ({LINE}) Tj ET");
            let text = text(&pdf(content.as_bytes(), deflate)).unwrap();
            assert!(text.contains(LINE), "{text:?}");
        }
    }

    #[test]
    fn a_page_of_images_only_has_no_text() {
        let content = b"q 100 0 0 100 0 0 cm 0.5 g 0 0 1 1 re f Q";
        assert_eq!(text(&pdf(content, true)), Err(Unread::NoText));
    }

    #[test]
    fn a_bomb_is_refused_within_its_budget() {
        // 80 MiB of zeros deflate to about 80 KiB.
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..80 {
            e.write_all(&zeros).unwrap();
        }
        let file = with_stream(e.finish().unwrap(), "/Filter /FlateDecode ");
        assert!(file.len() < 200 * 1024);
        let err = text(&file).unwrap_err();
        assert_eq!(err.reason(), "pdf_unreadable");
        assert!(err.to_string().contains("inflate"), "{err}");
    }

    #[test]
    fn a_stream_of_several_pieces_inflates_whole_and_is_charged() {
        let content: Vec<u8> = (0..=255u8).cycle().take(PIECE * 5 / 2).collect();
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&content).unwrap();
        let mut budget = MAX_INFLATED_BYTES;
        assert_eq!(zlib_inflate(&e.finish().unwrap(), &mut budget).unwrap(), Some(content.clone()));
        assert_eq!(budget, MAX_INFLATED_BYTES - content.len());
        // One byte over what is left: refused, nothing charged.
        let mut budget = content.len() - 1;
        let mut out = Inflated::new(&mut budget);
        let refused = content.chunks(64 * 1024).try_for_each(|c| out.add(c));
        assert_eq!(refused.map_err(|e| e.reason()), Err("pdf_unreadable"));
        assert_eq!(budget, content.len() - 1);
    }

    #[test]
    fn nesting_past_the_bound_is_refused_before_the_parser() {
        let deep = format!("BT /F1 12 Tf {}1{} TJ ET", "[".repeat(100_000), "]".repeat(100_000));
        for deflate in [false, true] {
            let err = text(&pdf(deep.as_bytes(), deflate)).unwrap_err();
            assert!(err.to_string().contains("nested"), "{err}");
        }
    }

    #[test]
    fn encrypted_broken_and_foreign_files() {
        let mut encrypted = pdf(b"BT ET", false);
        let at = find(&encrypted, b"/Root").unwrap();
        encrypted.splice(at..at, b"/Encrypt 9 0 R ".iter().copied());
        assert_eq!(text(&encrypted), Err(Unread::Encrypted));
        let whole = pdf(format!("BT /F1 12 Tf ({LINE}) Tj ET").as_bytes(), false);
        assert_eq!(text(&whole[..whole.len() / 2]).map_err(|e| e.reason()), Err("pdf_unreadable"));
        assert_eq!(text(b"GIF89a...").map_err(|e| e.reason()), Err("pdf_unreadable"));
        assert_eq!(text(b"").map_err(|e| e.reason()), Err("pdf_unreadable"));
    }
}
