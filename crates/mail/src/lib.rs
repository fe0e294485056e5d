//! Raw e-mail messages as the product reads them: the message a mail server
//! receives (RFC 5322 with MIME) turned into the facts an e-mail record
//! keeps — sender, recipient, subject, date, `Message-ID`, the readable text
//! and the attachments — with every limit checked first. Pure: bytes in,
//! facts or a refusal out; no I/O, no knowledge of tenants or records.
//!
//! Parsing is `mail-parser`'s (the Stalwart mail server's parser): RFC 2047
//! encoded words, charsets (UTF-8, the ISO-8859 family, Windows-125x and
//! others), quoted-printable and base64, every multipart kind, attached
//! `message/rfc822` parts. This module decides what the product takes from
//! what it parsed:
//!
//! - **Text**: every inline text body, in order; an HTML-only body as text
//!   (the parser's conversion: tags, comments and scripts dropped); then the
//!   text of each attached message (a forwarded bill), after a line that says
//!   so, so a boleto forwarded inside another e-mail is read.
//! - **Attachments**: every part that is not an inline body, those of
//!   attached messages included, with their bytes (a PDF's text is read
//!   elsewhere), name (`attachment-<n>` when the part has none) and type.
//! - **Dates**: the `Date` header as Unix seconds, when it parses.
//!
//! What is refused, before anything is kept: a message without a header
//! section (`Refusal::NotAMessage`), a header section over
//! `MAX_HEADER_BYTES`, more than `MAX_ATTACHMENTS` attachments, more than
//! `MAX_PARTS` parts in all.
//!
//! `untrusted` is the other side: the sanitiser of third-party text (a
//! subject, a body, a display name, an attachment's name) before it leaves
//! through MCP to an agent, and the fence it is shown in.

pub mod pdf;
pub mod untrusted;

use mail_parser::{Message, MessageParser, MimeHeaders};

/// The largest header section read (RFC 5322 sets no limit; real messages
/// with long `Received` chains stay well below).
pub const MAX_HEADER_BYTES: usize = 100 * 1024;
/// The most attachments one message may carry (the JSON form's limit too).
pub const MAX_ATTACHMENTS: usize = 50;
/// The most MIME parts of every kind in one message, nested ones included.
pub const MAX_PARTS: usize = 200;
/// The most bytes (UTF-8) of text kept; the rest is cut at a character
/// boundary (a bill's facts come first). The e-mail's record holds the text,
/// and a DynamoDB item holds at most 400 KB with everything else.
pub const MAX_TEXT_BYTES: usize = 256 * 1024;

/// A message as the product keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The first `From` address, as written (not yet checked as an address).
    pub from: Option<String>,
    /// The first `To` address (else `Delivered-To`), as written.
    pub to: Option<String>,
    pub subject: String,
    /// The `Date` header as Unix seconds, when it parses.
    pub date: Option<i64>,
    /// Without its angle brackets.
    pub message_id: Option<String>,
    pub text: String,
    /// Whether `text` was cut at `MAX_TEXT_BYTES`.
    pub text_cut: bool,
    pub attachments: Vec<Attachment>,
    /// The receiving server's `Authentication-Results` header, as written.
    pub authentication: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub name: String,
    /// `type/subtype`, lowercase (`application/octet-stream` when not said).
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// Why a message is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No header section naming a sender, recipient, subject, date or
    /// `Message-ID`: not a message at all.
    NotAMessage,
    /// The header section is over `MAX_HEADER_BYTES` bytes.
    HeaderTooLarge,
    /// More than `MAX_ATTACHMENTS` attachments (how many).
    TooManyAttachments(usize),
    /// More than `MAX_PARTS` MIME parts.
    TooManyParts,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAMessage => f.write_str("the body is not an e-mail message: it has no header section"),
            Refusal::HeaderTooLarge => write!(f, "the message's header section is over {MAX_HEADER_BYTES} bytes"),
            Refusal::TooManyAttachments(_) => {
                write!(
                    f,
                    "the message has more than {MAX_ATTACHMENTS} attachments; at most {MAX_ATTACHMENTS} are taken"
                )
            }
            Refusal::TooManyParts => {
                write!(f, "the message has over {MAX_PARTS} MIME parts or over {} attached messages", MAX_DEPTH * 2)
            }
        }
    }
}

/// Where the header section ends (the blank line), if it does.
fn header_len(raw: &[u8]) -> usize {
    let crlf = raw.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = raw.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => raw.len(),
    }
}

/// Reads a raw message.
pub fn read(raw: &[u8]) -> Result<Received, Refusal> {
    if header_len(raw) > MAX_HEADER_BYTES {
        return Err(Refusal::HeaderTooLarge);
    }
    // The parser nests an attached message inside its parent with no depth
    // limit of its own, and a tree thousands deep would overflow the stack
    // (dropping it, if nothing else). Count the declarations before parsing:
    // more than the forwards followed is refused.
    if nested_messages(raw) > MAX_DEPTH * 2 {
        return Err(Refusal::TooManyParts);
    }
    let message = MessageParser::default().parse(raw).ok_or(Refusal::NotAMessage)?;
    // Garbage parses too (as a body with odd headers): a message names at
    // least one of the fields every mail program writes.
    let named = ["From", "To", "Subject", "Date", "Message-ID"].iter().any(|h| message.header_raw(*h).is_some());
    if !named {
        return Err(Refusal::NotAMessage);
    }
    let mut parts = message.parts.len();
    let mut attachments = Vec::new();
    let mut text = String::new();
    collect(&message, &mut text, &mut attachments, &mut parts, 0)?;
    let (text, text_cut) = cut(text);
    Ok(Received {
        from: first_address(message.from()),
        to: first_address(message.to()).or_else(|| message.header_raw("Delivered-To").map(|v| v.trim().to_owned())),
        subject: message.subject().unwrap_or_default().trim().to_owned(),
        date: message.date().map(|d| d.to_timestamp()),
        message_id: message.message_id().map(str::to_owned),
        text,
        text_cut,
        attachments,
        authentication: topmost(&message, "Authentication-Results").map(|v| unfold(v.trim())),
    })
}

/// How many times `message/rfc822` is declared in `raw` (any case).
fn nested_messages(raw: &[u8]) -> usize {
    const NEEDLE: &[u8] = b"message/rfc822";
    raw.windows(NEEDLE.len()).filter(|w| w.eq_ignore_ascii_case(NEEDLE)).count()
}

/// The first (topmost) field called `name`, as written: for
/// `Authentication-Results` the one the receiving server added last, above
/// any a sender wrote (`header_raw` answers with the last field of a name).
fn topmost<'m>(message: &'m mail_parser::Message<'_>, name: &str) -> Option<&'m str> {
    let field = message.headers().iter().find(|h| h.name.as_str().eq_ignore_ascii_case(name))?;
    let raw = message.raw_message.get(field.offset_start as usize..field.offset_end as usize)?;
    std::str::from_utf8(raw).ok()
}

/// A header's value on one line (folding whitespace as one space).
fn unfold(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn first_address(address: Option<&mail_parser::Address<'_>>) -> Option<String> {
    address?.first()?.address().map(str::to_owned)
}

/// How deep attached messages are followed (a forward of a forward of …).
const MAX_DEPTH: usize = 10;

/// The text and the attachments of `message`, and of the messages attached
/// to it, in order.
fn collect(
    message: &Message<'_>,
    text: &mut String,
    attachments: &mut Vec<Attachment>,
    parts: &mut usize,
    depth: usize,
) -> Result<(), Refusal> {
    for i in 0..message.text_body_count() {
        if let Some(body) = message.body_text(i) {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(body.trim_end());
        }
    }
    for part in message.attachments() {
        if let Some(inner) = part.message() {
            *parts += inner.parts.len();
            if *parts > MAX_PARTS {
                return Err(Refusal::TooManyParts);
            }
            if depth < MAX_DEPTH {
                text.push_str("\n\n---------- Forwarded message ----------\n");
                if let Some(subject) = inner.subject() {
                    text.push_str("Subject: ");
                    text.push_str(subject);
                    text.push('\n');
                }
                collect(inner, text, attachments, parts, depth + 1)?;
            }
            continue;
        }
        if attachments.len() == MAX_ATTACHMENTS {
            return Err(Refusal::TooManyAttachments(attachments.len() + 1));
        }
        let content_type = part.content_type().map_or_else(
            || "application/octet-stream".to_owned(),
            |t| match t.subtype() {
                Some(sub) => format!("{}/{}", t.ctype(), sub).to_ascii_lowercase(),
                None => t.ctype().to_ascii_lowercase(),
            },
        );
        let name = part.attachment_name().map(str::trim).filter(|n| !n.is_empty());
        attachments.push(Attachment {
            name: name.map_or_else(|| format!("attachment-{}", attachments.len() + 1), str::to_owned),
            content_type,
            bytes: part.contents().to_vec(),
        });
    }
    if *parts > MAX_PARTS {
        return Err(Refusal::TooManyParts);
    }
    Ok(())
}

/// `text` cut to at most `MAX_TEXT_BYTES` bytes at a character boundary,
/// and whether it was.
fn cut(mut text: String) -> (String, bool) {
    if text.len() <= MAX_TEXT_BYTES {
        return (text, false);
    }
    let mut at = MAX_TEXT_BYTES;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    (text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_without_headers_is_not_a_message() {
        for raw in [&b""[..], b"\r\n\r\nno headers", b"\x00\x01\x02"] {
            assert!(read(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn a_header_section_of_the_limit_is_read_and_one_byte_more_refused_before_parsing() {
        let with_header = |len: usize| {
            let mut raw = b"Subject: x\r\nX-Long: ".to_vec();
            let pad = len - raw.len();
            raw.extend(std::iter::repeat_n(b'a', pad));
            raw.extend(b"\r\n\r\nbody");
            raw
        };
        assert_eq!(read(&with_header(MAX_HEADER_BYTES)).map(|m| m.subject), Ok("x".to_owned()));
        assert_eq!(read(&with_header(MAX_HEADER_BYTES + 1)), Err(Refusal::HeaderTooLarge));
    }

    /// A multipart/mixed message of a text part and `n` copies of `part`
    /// (given its index).
    fn multipart(n: usize, part: impl Fn(usize) -> String) -> String {
        let mut raw = String::from(
            "From: a@b.example\r\nTo: c@d.example\r\nSubject: many\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n",
        );
        for i in 0..n {
            raw.push_str("--B\r\n");
            raw.push_str(&part(i));
        }
        raw.push_str("--B--\r\n");
        raw
    }

    #[test]
    fn parts_are_counted_across_attached_messages() {
        // One attached message a part: each brings its own parts.
        let attached = |i| {
            format!("Content-Type: message/rfc822\r\n\r\nFrom: c@d.example\r\nSubject: inner {i}\r\n\r\ntext {i}\r\n")
        };
        let read_parts = |n| read(multipart(n, attached).as_bytes()).map(|m| m.text.matches("text ").count());
        assert_eq!(read_parts(15), Ok(15));
        assert_eq!(read_parts(150), Err(Refusal::TooManyParts));
    }

    #[test]
    fn fifty_attachments_are_taken_and_the_fifty_first_refused() {
        let pdf = |i| {
            format!(
                "Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"f{i}.pdf\"\r\n\r\n%PDF\r\n"
            )
        };
        assert_eq!(read(multipart(50, pdf).as_bytes()).map(|m| m.attachments.len()), Ok(50));
        assert_eq!(read(multipart(51, pdf).as_bytes()), Err(Refusal::TooManyAttachments(51)));
    }

    #[test]
    fn messages_nested_thousands_deep_are_refused_before_parsing() {
        let mut raw = b"From: a@b.example\r\nSubject: s\r\n".to_vec();
        for _ in 0..100_000 {
            raw.extend(b"Content-Type: message/rfc822\r\n\r\nFrom: a@b.example\r\n");
        }
        assert_eq!(read(&raw), Err(Refusal::TooManyParts));
        let mut few = b"From: a@b.example\r\nSubject: s\r\n".to_vec();
        for _ in 0..5 {
            few.extend(b"Content-Type: message/rfc822\r\n\r\nFrom: a@b.example\r\n");
        }
        assert!(read(&few).is_ok());
    }

    #[test]
    fn a_missing_boundary_is_read_as_text_not_refused() {
        let raw = b"From: a@b.example\r\nSubject: s\r\nContent-Type: multipart/mixed\r\n\r\nLinha: 123\r\n";
        let message = read(raw).unwrap();
        assert_eq!(message.subject, "s");
    }
}
