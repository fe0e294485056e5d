#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/) from the recorded events'
bodies and headers and from the test fixtures, so the fuzzer starts from
real requests instead of empty input. Idempotent: a seed is named by its hash."""
import hashlib, json, pathlib, re

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
