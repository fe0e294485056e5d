//! Every message under `tests/messages/`, written by Python's standard
//! `email` package (`make.py`: an independent implementation of RFC 5322 and
//! MIME), read back: sender, recipient, subject, date, `Message-ID`, the
//! text a boleto is searched in, the attachments with their bytes, and the
//! `Authentication-Results` header, each as the generator recorded it.

// A panic in a test is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, reason = "test code")]

use std::path::Path;

use serde_json::Value;

fn rfc3339(unix: i64) -> String {
    // Seconds to a UTC date and time, for comparing with the generator's value.
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

#[test]
fn every_generated_message_reads_as_its_generator_says() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("eml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let raw = std::fs::read(&path).unwrap();
        let expect: Value =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap()).unwrap();
        let message = inbox_mail::read(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(message.from.as_deref(), expect["from"].as_str(), "{name}: from");
        assert_eq!(message.to.as_deref(), expect["to"].as_str(), "{name}: to");
        assert_eq!(message.subject, expect["subject"].as_str().unwrap(), "{name}: subject");
        assert_eq!(message.date.map(rfc3339).as_deref(), expect["date"].as_str(), "{name}: date");
        assert_eq!(message.message_id.as_deref(), expect["message_id"].as_str(), "{name}: Message-ID");
        for wanted in expect["text_has"].as_array().unwrap() {
            let wanted = wanted.as_str().unwrap();
            assert!(message.text.contains(wanted), "{name}: the text has {wanted:?}: {:?}", message.text);
        }
        assert!(!message.text.contains("<p>") && !message.text.contains("alert(1)"), "{name}: {:?}", message.text);
        let attachments: Vec<Value> = message
            .attachments
            .iter()
            .map(|a| serde_json::json!({"name": a.name, "content_type": a.content_type, "size": a.bytes.len()}))
            .collect();
        assert_eq!(Value::from(attachments), expect["attachments"], "{name}: attachments");
        assert_eq!(message.authentication.as_deref(), expect["authentication"].as_str(), "{name}: authentication");
        assert!(!message.text_cut);
        read += 1;
    }
    assert_eq!(read, 9, "every message under tests/messages");
}
