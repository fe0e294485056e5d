#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/) from the recorded events'
bodies and headers and from the test fixtures, so the fuzzer starts from
real requests instead of empty input. Idempotent: a seed is named by its hash."""
import base64, hashlib, json, pathlib, re, zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"

def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)

for path in sorted((ROOT / "events").glob("*.json")):
    if path.name.endswith(".expected.json") or path.name.startswith("worker-"):
        continue
    event = json.loads(path.read_text())
    body = event.get("body") or ""
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    if body:
        seed("jsonrpc", body)
        seed("mcp_prepare", b"\x00\x00" + body.encode())
        for url in re.findall(r'https?://[^"\\ ]+', body):
            seed("webhook_url", url)
    if "mcp-name" in headers:
        seed("routing_header", headers["mcp-name"])

for name in ["emails_get", "kobana://inbox/emails/eml_1", "=?base64?ZW1haWxzX2RlbGV0ZQ==?=", "cobrança", " lead"]:
    seed("routing_header", name)
for url in ["https://hooks.example.com/kobana", "https://[::ffff:127.0.0.1]/x", "https://169.254.169.254/latest",
            "https://localhost./x", "https://a.localhost/x", "http://127.0.0.1:8080/hook", "https://10.0.0.1/"]:
    seed("webhook_url", url)

# Boleto fixtures: every digit run of 44 to 48 digits (with separators) in the sources and tests.
lines = set()
for path in list((ROOT / "src").rglob("*.rs")) + list((ROOT / "tests").rglob("*.rs")):
    for match in re.findall(r"[0-9][0-9 .\-]{43,80}[0-9]", path.read_text(errors="ignore")):
        if 44 <= sum(c.isdigit() for c in match) <= 48:
            lines.add(match)
for line in sorted(lines):
    seed("boleto", f"Segue o boleto:\n{line}\nObrigado.")
seed("sealed_token", "not-a-token")
# Raw messages: the ones Python's email package wrote for the mail crate's tests.
for path in sorted((ROOT / "crates/mail/tests/messages").glob("*.eml")):
    seed("mail", path.read_bytes())
# PDFs: the bill corpus's files up to 128 KiB (the boletos, the scan, the encrypted and the
# broken one), and the boletos' page content streams decoded (ASCII85, then Flate), which the
# target reads inside a one-page PDF. Left out: bomb.pdf and many-pages.pdf, 1 MB each, whose
# every run costs the whole bound (64 MiB inflated; ten thousand pages parsed before they are
# refused), and libFuzzer grows its inputs up to the largest seed; their reasons are checked by
# tests/it/bills.rs and the crate's own tests.
for path in sorted((ROOT / "tests/bills/pdf").glob("*.pdf")):
    data = path.read_bytes()
    if len(data) > 128 * 1024:
        continue
    seed("pdf", data)
    for match in re.finditer(rb"/Filter \[ /ASCII85Decode /FlateDecode \] /Length (\d+)\s*>>\s*stream\r?\n", data):
        encoded = data[match.end():match.end() + int(match.group(1))].strip().removesuffix(b"~>")
        try:
            seed("pdf", zlib.decompress(base64.a85decode(encoded)))
        except ValueError:
            pass
for content in [b"BT /F1 12 Tf 72 700 Td (34191.09123 34567.800007 01234.567897 1 16560000015990) Tj ET",
                b"BT /F1 12 Tf [(a) -250 (b)] TJ T* (c) ' 1 2 (d) \" ET", b"BT /F1 12 Tf <3334313931> Tj ET"]:
    seed("pdf", content)
