//! Characters that hide, reorder or break text when it is shown, and how
//! text is shown so that none of them acts.
//!
//! A caller's text (a name, a description, a slug, a URL) ends up in front of
//! a person: in a confirmation the person approves, in a list, in a log line.
//! A character that is invisible or that moves what follows it — a line or
//! paragraph separator, a bidirectional override, a zero-width character, a
//! tag character, a C0 or C1 control — lets that text pass for something
//! else (issue 43: a webhook description of line separators and a U+202E
//! pushed the real URL out of a confirmation and mirrored it). The API
//! refuses these characters in every text field it takes from callers
//! (`inbox_api::input::caller_text`); wherever text of any origin is shown
//! in a confirmation, `escape` writes them as `\u{XXXX}`.
//!
//! Third-party e-mail text (an ingested subject or body) is stored as
//! received and is not checked here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// What `c` is, when text must not hold it: the name the error gives
/// (`"line separator"`); `None` for a character text may hold.
pub fn hidden(c: char) -> Option<&'static str> {
    let name = match c {
        '\0' => "null",
        '\t' => "tab",
        '\n' => "line feed",
        '\r' => "carriage return",
        '\u{1B}' => "escape",
        '\u{7F}' => "delete",
        c if c.is_control() => "control character",
        '\u{2028}' => "line separator",
        '\u{2029}' => "paragraph separator",
        '\u{200B}' => "zero width space",
        '\u{200C}' => "zero width non-joiner",
        '\u{200D}' => "zero width joiner",
        '\u{2060}' => "word joiner",
        '\u{FEFF}' => "zero width no-break space",
        '\u{200E}' => "left-to-right mark",
        '\u{200F}' => "right-to-left mark",
        '\u{061C}' => "arabic letter mark",
        '\u{202A}' => "left-to-right embedding",
        '\u{202B}' => "right-to-left embedding",
        '\u{202C}' => "pop directional formatting",
        '\u{202D}' => "left-to-right override",
        '\u{202E}' => "right-to-left override",
        '\u{2066}' => "left-to-right isolate",
        '\u{2067}' => "right-to-left isolate",
        '\u{2068}' => "first strong isolate",
        '\u{2069}' => "pop directional isolate",
        '\u{E0000}'..='\u{E007F}' => "tag character",
        c if is_format(c) => "invisible format character",
        _ => return None,
    };
    Some(name)
}

/// Whether text must not hold `c` (see `hidden`).
pub fn is_hidden(c: char) -> bool {
    hidden(c).is_some()
}

/// Unicode's format characters (general category Cf, Unicode 15.1): soft
/// hyphen, Arabic and Syriac number signs, the Mongolian vowel separator,
/// zero-width and bidirectional controls, invisible operators, interlinear
/// annotation marks, Egyptian, Brahmi, Kaithi, shorthand and musical format
/// controls, and the language tag. A table, since the standard library has
/// no general category; a test checks it against the named characters.
pub fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{600}'..='\u{605}'
            | '\u{61C}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{890}'..='\u{891}'
            | '\u{8E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// The first character of `text` it must not hold, with its name.
pub fn first_hidden(text: &str) -> Option<(char, &'static str)> {
    text.chars().find_map(|c| hidden(c).map(|name| (c, name)))
}

/// `U+2028 (line separator)`: a character as an error names it.
pub fn describe(c: char, name: &str) -> String {
    format!("U+{:04X} ({name})", u32::from(c))
}

/// `text` with every character it must not hold written as `\u{XXXX}`,
/// and nothing else changed: what a confirmation shows.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_bidi_zero_width_tags_and_controls_are_hidden_and_letters_are_not() {
        let hidden_ones = [
            '\0',
            '\t',
            '\n',
            '\r',
            '\u{1B}',
            '\u{7F}',
            '\u{85}',
            '\u{9F}',
            '\u{2028}',
            '\u{2029}',
            '\u{202A}',
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{200E}',
            '\u{200F}',
            '\u{061C}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{AD}',
            '\u{180E}',
            '\u{2064}',
            '\u{206F}',
            '\u{FFF9}',
            '\u{E0000}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{1D173}',
            '\u{13430}',
        ];
        for c in hidden_ones {
            assert!(is_hidden(c), "U+{:04X}", u32::from(c));
        }
        for c in ['a', 'Z', ' ', 'ç', 'ã', 'é', '-', '€', 'م', 'א', '中', '😀', '\u{301}', '\u{FE0F}', '\u{E0080}']
        {
            assert!(!is_hidden(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn the_first_hidden_character_is_named_by_its_code_point() {
        let found = first_hidden("Monthly report\u{2028}\u{202E}");
        assert_eq!(found, Some(('\u{2028}', "line separator")));
        let (c, name) = found.unwrap();
        assert_eq!(describe(c, name), "U+2028 (line separator)");
        assert_eq!(first_hidden("Relatório mensal — Açaí"), None);
        let (c, name) = first_hidden("x\u{E0041}").unwrap();
        assert_eq!(describe(c, name), "U+E0041 (tag character)");
    }

    #[test]
    fn escaping_writes_every_hidden_character_as_its_code_point_and_keeps_the_rest() {
        assert_eq!(escape("Relatório"), "Relatório");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a\u{2028}b\u{202E}c\u{E0041}\n"), "a\\u{2028}b\\u{202E}c\\u{E0041}\\u{000A}");
        let escaped = escape("\u{2028}\u{2029}\u{200B}\u{FEFF}\u{2066}");
        assert!(!escaped.chars().any(is_hidden), "{escaped}");
    }
}
