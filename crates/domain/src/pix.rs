//! Pix "copia e cola" codes: the EMV QR Code payload of the Brazilian
//! instant payment system (the Central Bank's BR Code), as it appears in a
//! bill's text beside or instead of a boleto's digitable line.
//!
//! A payload is a run of TLV fields (two-digit id, two-digit length, value)
//! that starts with `000201` (payload format 01) and ends with the CRC field
//! `6304` and four hex digits: CRC-16/CCITT-FALSE (polynomial 0x1021, initial
//! value 0xFFFF, no reflection, no final xor) of everything before those
//! digits, `6304` included. A code is kept only when its CRC holds, its
//! fields parse to the end, and it carries a Pix merchant account (field 26
//! with the GUI `br.gov.bcb.pix`, any case) naming a key (static codes) or a
//! location URL (dynamic codes).
//!
//! What is kept: the code itself, the key or URL, the merchant's name and city, the amount
//! when the code fixes one, and the transaction id (`txid`, field 62/05).

use serde::{Deserialize, Serialize};

/// A Pix code found in a text, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pix {
    /// The code itself, as a payer's bank app takes it ("copia e cola").
    #[serde(default)]
    pub payload: String,
    /// The Pix key (an e-mail, phone, CPF/CNPJ or random key) of a static code.
    pub key: Option<String>,
    /// The payload location of a dynamic code (the payer's bank fetches the charge there).
    pub url: Option<String>,
    pub merchant_name: String,
    pub merchant_city: String,
    /// The amount the code fixes, in centavos; `null` when the payer types it.
    pub amount_cents: Option<u64>,
    /// The transaction id (`***` when the code has none).
    pub txid: Option<String>,
}

/// The longest payload considered (the BR Code's fields bound it well below).
const MAX_PAYLOAD: usize = 512;

/// CRC-16/CCITT-FALSE of `bytes`.
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// The TLV fields of `text` from its start, up to and including the CRC
/// field (`63`), as (id, value, where the value ends); `None` when a field
/// does not parse or the CRC field never comes.
fn fields(text: &str) -> Option<(Vec<(u8, &str)>, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len().min(MAX_PAYLOAD) {
        let id: u8 = text.get(at..at + 2)?.parse().ok()?;
        let len: usize = text.get(at + 2..at + 4)?.parse().ok()?;
        let start = at + 4;
        let value = text.get(start..start + len)?;
        out.push((id, value));
        at = start + len;
        if id == 63 {
            return (len == 4).then_some((out, at));
        }
    }
    None
}

/// The subfields of a template field (26, 62), or none when it does not parse.
fn subfields(value: &str) -> Vec<(u8, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < value.len() {
        let parsed = (|| {
            let id: u8 = value.get(at..at + 2)?.parse().ok()?;
            let len: usize = value.get(at + 2..at + 4)?.parse().ok()?;
            Some((id, value.get(at + 4..at + 4 + len)?, at + 4 + len))
        })();
        match parsed {
            Some((id, sub, next)) => {
                out.push((id, sub));
                at = next;
            }
            None => return Vec::new(),
        }
    }
    out
}

/// `10.50` as 1050 centavos: digits, at most one point, at most two decimals.
fn cents(amount: &str) -> Option<u64> {
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 2 {
        return None;
    }
    let fraction = format!("{fraction:0<2}");
    whole.parse::<u64>().ok()?.checked_mul(100)?.checked_add(fraction.parse().ok()?)
}

/// The Pix code that starts at the beginning of `text`, if one does.
pub fn parse(text: &str) -> Option<Pix> {
    let (fields, end) = fields(text)?;
    let payload = text.get(..end)?;
    let (crc_text, before) = (payload.get(end - 4..)?, payload.get(..end - 4)?);
    if u16::from_str_radix(crc_text, 16).ok()? != crc16(before.as_bytes()) {
        return None;
    }
    if fields.first() != Some(&(0, "01")) {
        return None;
    }
    let value = |id: u8| fields.iter().find(|(f, _)| *f == id).map(|(_, v)| *v);
    let account = fields.iter().filter(|(id, _)| (26..=51).contains(id)).find_map(|(_, v)| {
        let sub = subfields(v);
        let gui = sub.iter().find(|(id, _)| *id == 0)?.1;
        gui.eq_ignore_ascii_case("br.gov.bcb.pix").then_some(sub)
    })?;
    let sub = |id: u8| account.iter().find(|(f, _)| *f == id).map(|(_, v)| (*v).to_owned());
    let (key, url) = (sub(1), sub(25));
    if key.is_none() && url.is_none() {
        return None;
    }
    let amount_cents = match value(54) {
        Some(amount) => Some(cents(amount)?),
        None => None,
    };
    let txid = value(62).and_then(|v| subfields(v).into_iter().find(|(id, _)| *id == 5).map(|(_, t)| t.to_owned()));
    Some(Pix {
        payload: payload.to_owned(),
        key,
        url,
        merchant_name: value(59)?.to_owned(),
        merchant_city: value(60)?.to_owned(),
        amount_cents,
        txid,
    })
}

/// Every checked Pix code in `text`, in order, each once. A code broken
/// across lines (as a PDF's text layer may give it) is found with its line
/// breaks taken out.
pub fn find_all(text: &str) -> Vec<Pix> {
    let mut found: Vec<Pix> = Vec::new();
    let mut scan = |haystack: &str| {
        for (at, _) in haystack.match_indices("000201") {
            if let Some(pix) = haystack.get(at..).and_then(parse)
                && !found.contains(&pix)
            {
                found.push(pix);
            }
        }
    };
    scan(text);
    if text.contains(['\n', '\r']) {
        let joined: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
        scan(&joined);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A payload with its CRC appended: what every generator does last.
    fn signed(body: &str) -> String {
        let with_tag = format!("{body}6304");
        format!("{with_tag}{:04X}", crc16(with_tag.as_bytes()))
    }

    fn field(id: u8, value: &str) -> String {
        format!("{id:02}{:02}{value}", value.len())
    }

    fn static_code(key: &str, amount: Option<&str>) -> String {
        let account = field(0, "br.gov.bcb.pix") + &field(1, key);
        let mut body = field(0, "01") + &field(26, &account) + &field(52, "0000") + &field(53, "986");
        if let Some(amount) = amount {
            body += &field(54, amount);
        }
        body +=
            &(field(58, "BR") + &field(59, "ENERGIA SA") + &field(60, "SAO PAULO") + &field(62, &field(5, "FAT123")));
        signed(&body)
    }

    #[test]
    fn the_crc_is_ccitt_false() {
        // The catalogue's check value of CRC-16/CCITT-FALSE.
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    /// The example of the Central Bank's manual of BR Code payloads ("Manual
    /// de Padrões para Iniciação do Pix"): an oracle this module did not write.
    #[test]
    fn the_central_banks_example_reads_as_the_manual_says() {
        let code = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";
        let pix = parse(code).unwrap();
        assert_eq!(pix.key.as_deref(), Some("123e4567-e12b-12d1-a456-426655440000"));
        assert_eq!((pix.merchant_name.as_str(), pix.merchant_city.as_str()), ("Fulano de Tal", "BRASILIA"));
        assert_eq!((pix.amount_cents, pix.url.as_deref(), pix.txid.as_deref()), (None, None, Some("***")));
        assert_eq!(find_all(&format!("Pague: {code} (copia e cola)")), vec![pix]);
    }

    #[test]
    fn a_static_code_gives_its_key_merchant_amount_and_txid() {
        let code = static_code("financeiro@energia.example.com", Some("159.90"));
        let pix = parse(&code).unwrap();
        assert_eq!(pix.key.as_deref(), Some("financeiro@energia.example.com"));
        assert_eq!((pix.merchant_name.as_str(), pix.merchant_city.as_str()), ("ENERGIA SA", "SAO PAULO"));
        assert_eq!(pix.amount_cents, Some(15990));
        assert_eq!(pix.txid.as_deref(), Some("FAT123"));
        assert_eq!(parse(&static_code("key", None)).unwrap().amount_cents, None);
    }

    #[test]
    fn a_wrong_crc_or_a_code_of_another_scheme_is_no_pix() {
        let code = static_code("k@example.com", Some("1.00"));
        let mut broken = code.clone();
        broken.replace_range(code.len() - 1.., if code.ends_with('0') { "1" } else { "0" });
        assert_eq!(parse(&broken), None);
        let other = field(0, "br.com.other") + &field(1, "k");
        let body = field(0, "01") + &field(26, &other) + &field(59, "X") + &field(60, "Y");
        assert_eq!(parse(&signed(&body)), None);
        for bad in ["", "000201", "0002016304", "00020X", &"0".repeat(600)] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn codes_are_found_in_text_and_across_line_breaks() {
        let code = static_code("11222333000181", Some("10"));
        let text = format!("Pague com Pix:\n{}\n{}\nObrigado", &code[..40], &code[40..]);
        assert_eq!(find_all(&text).len(), 1);
        let twice = format!("{code} e de novo {code}");
        assert_eq!(find_all(&twice).len(), 1, "the same code once");
        assert_eq!(find_all(&text)[0].amount_cents, Some(1000));
    }

    #[test]
    fn amounts_parse_to_centavos() {
        for (text, cents_) in
            [("1", Some(100)), ("1.5", Some(150)), ("0.01", Some(1)), ("1.234", None), ("-1", None), (".5", None)]
        {
            assert_eq!(cents(text), cents_, "{text}");
        }
    }
}
