"""The Python peer of the mail benchmark: what examples/mail_bench.rs does
with a raw bill e-mail, done the usual Python way. `make bench` runs both on
the same messages, on the same core, and compares them (scripts/bench.py).

Per message, the same steps in the same order:
  * the raw message parsed by the standard `email` package
    (`BytesParser(policy=policy.default)`): the body is `get_body()` of plain
    text before HTML (HTML turned into text with the standard `html.parser`,
    scripts and styles dropped), the attachments are `iter_attachments()`,
    an attached `message/rfc822` followed (its text after a "Forwarded
    message" line, its attachments among the message's), each attachment's
    bytes decoded (`get_content()`), and its SHA-256 taken (`hashlib`);
  * every attachment that looks like a PDF (its type or name) read with
    pypdf, under the product's own rules (`inbox_mail::pdf`): a `%PDF-`
    header in the first KiB, an encrypted file not opened, more than 100
    pages refused, pages read one by one until 256 KiB of text or 2 s, a page
    that fails skipped, pypdf's decompression limit (`LimitReachedError`) an
    unreadable file, no text at all "pdf_no_text";
  * the boleto search (`inbox_domain::boleto`: runs of digit groups joined by
    one space, dot or hyphen; every span of 44, 47 or 48 digits; modulo 10 and
    11 check digits, currency, due-date factor, amount) and the Pix search
    (`inbox_domain::pix`: each `000201`, its TLV fields up to `6304`, the
    CRC-16/CCITT-FALSE through `binascii.crc_hqx`, the `br.gov.bcb.pix`
    account; again with the text's line breaks taken out) in each PDF's text,
    then in the body.

Commands (each prints one JSON object, as mail_bench does):
  throughput SECONDS FILE...  warm-up pass, then passes until SECONDS of wall
                              time; the thread's CPU time (thread_time_ns)
  memory FILE                 one message read; peak RSS (ru_maxrss) along the way
  make-large OUT BASE PDF...  writes the memory measurement's message: BASE (a
                              bill message) with each PDF attached, each given a
                              page image of noise so the whole is just over
                              10 MiB
"""
import binascii
import datetime
import hashlib
import html.parser
import io
import json
import logging
import random
import re
import resource
import sys
import time
from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

from pypdf import PdfReader
from pypdf.errors import LimitReachedError

# pypdf's warnings (a missing EOF marker, …) are logged to stderr; the reader
# logs nothing, so neither does the peer.
logging.getLogger("pypdf").setLevel(logging.ERROR)

MAX_PAGES = 100
MAX_TEXT = 256 * 1024
TIME_BUDGET = 2.0
MAX_SCAN = 1_048_576
MAX_CANDIDATES = 64
MAX_PAYLOAD = 512


# --- the message ---------------------------------------------------------

class _Text(html.parser.HTMLParser):
    BLOCKS = {"p", "br", "div", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "td", "th"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCKS:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def html_text(markup):
    parser = _Text()
    parser.feed(markup)
    parser.close()
    return "".join(parser.out)


def collect(msg, texts, attachments, depth=0):
    body = msg.get_body(preferencelist=("plain", "html"))
    if body is not None:
        content = body.get_content()
        texts.append((html_text(content) if body.get_content_subtype() == "html" else content).rstrip())
    for part in msg.iter_attachments():
        if part.get_content_type() == "message/rfc822":
            inner = part.get_content()
            if depth < 10:
                texts.append("---------- Forwarded message ----------\nSubject: " + str(inner.get("subject", "")))
                collect(inner, texts, attachments, depth + 1)
            continue
        data = part.get_content()
        if isinstance(data, str):
            data = data.encode()
        attachments.append((part.get_filename() or "", part.get_content_type(), data))


def read(raw):
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    texts, attachments = [], []
    collect(msg, texts, attachments)
    for _, _, data in attachments:
        hashlib.sha256(data).hexdigest()
    try:
        received = parsedate_to_datetime(msg["date"]).astimezone(datetime.timezone.utc).date()
    except (TypeError, ValueError):
        received = datetime.datetime.now(datetime.timezone.utc).date()
    return "\n\n".join(texts), attachments, received


# --- PDF text ------------------------------------------------------------

class Unread(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def pdf_text(data):
    if b"%PDF-" not in data[:1024]:
        raise Unread("pdf_unreadable")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Unread("pdf_encrypted")
        pages = reader.pages
        count = len(pages)
    except Unread:
        raise
    except Exception:
        raise Unread("pdf_unreadable")
    if count > MAX_PAGES or count == 0:
        raise Unread("pdf_unreadable")
    started, out, size = time.monotonic(), [], 0
    for page in pages:
        try:
            chunk = page.extract_text() or ""
        except LimitReachedError:
            raise Unread("pdf_unreadable")
        except Exception:
            chunk = ""
        out.append(chunk + "\n")
        size += len(chunk) + 1
        if size >= MAX_TEXT or time.monotonic() - started > TIME_BUDGET:
            break
    text = "".join(out)[:MAX_TEXT]
    if not text.strip():
        raise Unread("pdf_no_text")
    return text


# --- boletos -------------------------------------------------------------

RUN = re.compile(r"[0-9]+(?:[ .-][0-9]+)*")
SEPARATOR = re.compile(r"[ .-]")
EPOCH = datetime.date(1997, 10, 7)


def mod10(digits):
    total = 0
    for i, d in enumerate(reversed(digits)):
        p = d * (2 if i % 2 == 0 else 1)
        total += p // 10 + p % 10
    return (10 - total % 10) % 10


def mod11_sum(digits):
    return sum(d * (2 + i % 8) for i, d in enumerate(reversed(digits)))


def mod11_bank(digits):
    d = 11 - mod11_sum(digits) % 11
    return 1 if d in (0, 10, 11) else d


def mod11_utility(digits):
    r = mod11_sum(digits) % 11
    return 0 if r in (0, 1) else 11 - r


def due_date(factor, received):
    if factor == 0:
        return None
    if factor < 1000:
        raise ValueError("factor")
    first = EPOCH + datetime.timedelta(days=factor)
    return min((first + datetime.timedelta(days=9000 * c) for c in range(4)), key=lambda d: abs((d - received).days))


def number(digits):
    return int("".join(map(str, digits)))


def bank_barcode(b, received):
    if b[0] == 8 or b[3] != 9:
        raise ValueError("bank")
    if mod11_bank(b[:4] + b[5:]) != b[4]:
        raise ValueError("general check digit")
    amount = number(b[9:19])
    if amount == 0:
        raise ValueError("zero")
    return {"barcode": "".join(map(str, b)), "amount_cents": amount, "due_date": due_date(number(b[5:9]), received),
            "bank_code": "".join(map(str, b[:3]))}


def utility_modulus(value_type):
    if value_type in (6, 7):
        return mod10
    if value_type in (8, 9):
        return mod11_utility
    raise ValueError("value type")


def utility_barcode(b):
    modulus = utility_modulus(b[2])
    if modulus(b[:3] + b[4:]) != b[3]:
        raise ValueError("general check digit")
    amount = number(b[4:15]) if b[2] in (6, 8) else None
    if amount == 0:
        raise ValueError("zero")
    return {"barcode": "".join(map(str, b)), "amount_cents": amount, "due_date": None, "bank_code": None}


def parse_slip(candidate, received):
    d = [ord(c) - 48 for c in candidate]
    if len(d) == 47:
        for field, (lo, hi) in enumerate(((0, 9), (10, 20), (21, 31))):
            if mod10(d[lo:hi]) != d[hi]:
                raise ValueError(f"field {field + 1}")
        return bank_barcode(d[0:4] + d[32:33] + d[33:47] + d[4:9] + d[10:20] + d[21:31], received)
    if len(d) == 48:
        if d[0] != 8:
            raise ValueError("utility")
        modulus = utility_modulus(d[2])
        for i in range(4):
            block = d[12 * i:12 * i + 12]
            if modulus(block[:11]) != block[11]:
                raise ValueError(f"block {i + 1}")
        return utility_barcode([x for i in range(4) for x in d[12 * i:12 * i + 11]])
    if len(d) == 44:
        return utility_barcode(d) if d[0] == 8 else bank_barcode(d, received)
    raise ValueError("not found")


def candidates(text):
    found = []
    for run in RUN.finditer(text[:MAX_SCAN]):
        groups = SEPARATOR.split(run.group())
        for start in range(len(groups)):
            joined = ""
            for group in groups[start:]:
                joined += group
                if len(joined) in (44, 47, 48) and joined not in found:
                    found.append(joined)
                if len(joined) >= 48 or len(found) >= MAX_CANDIDATES:
                    break
    return found


def boletos(text, received):
    valid = []
    for candidate in candidates(text):
        try:
            slip = parse_slip(candidate, received)
        except ValueError:
            continue
        if all(v["barcode"] != slip["barcode"] for v in valid):
            valid.append(slip)
    return valid


# --- Pix -----------------------------------------------------------------

def tlv(value, limit=None):
    out, at, end = [], 0, len(value) if limit is None else min(len(value), limit)
    while at < end:
        head = value[at:at + 4]
        if len(head) < 4 or not head.isdigit():
            return None
        fid, length = int(head[:2]), int(head[2:])
        field = value[at + 4:at + 4 + length]
        if len(field) < length:
            return None
        out.append((fid, field))
        at += 4 + length
        if limit is not None and fid == 63:
            return (out, at) if length == 4 else None
    return None if limit is not None else out


def cents(amount):
    whole, _, fraction = amount.partition(".")
    if not whole or not whole.isdigit() or (fraction and not fraction.isdigit()) or len(fraction) > 2:
        return None
    return int(whole) * 100 + int(fraction.ljust(2, "0"))


def parse_pix(text):
    parsed = tlv(text, MAX_PAYLOAD)
    if parsed is None:
        return None
    fields, end = parsed
    payload = text[:end]
    try:
        if int(payload[-4:], 16) != binascii.crc_hqx(payload[:-4].encode(), 0xFFFF):
            return None
    except ValueError:
        return None
    if not fields or fields[0] != (0, "01"):
        return None
    values = dict(reversed(fields))
    account = None
    for fid, value in fields:
        if 26 <= fid <= 51:
            sub = tlv(value) or []
            gui = next((v for i, v in sub if i == 0), None)
            if gui is not None and gui.lower() == "br.gov.bcb.pix":
                account = dict(reversed(sub))
                break
    if account is None or (1 not in account and 25 not in account):
        return None
    amount = None
    if 54 in values:
        amount = cents(values[54])
        if amount is None:
            return None
    if 59 not in values or 60 not in values:
        return None
    return {"payload": payload, "key": account.get(1), "url": account.get(25), "merchant_name": values[59],
            "merchant_city": values[60], "amount_cents": amount}


def pix_codes(text):
    found = []

    def scan(haystack):
        at = haystack.find("000201")
        while at != -1:
            pix = parse_pix(haystack[at:])
            if pix is not None and pix not in found:
                found.append(pix)
            at = haystack.find("000201", at + 1)
    scan(text)
    if "\n" in text or "\r" in text:
        scan(text.replace("\n", "").replace("\r", ""))
    return found


# --- one message ---------------------------------------------------------

def search(text, received, found):
    for slip in boletos(text, received):
        if slip["barcode"] not in found:
            found.append(slip["barcode"])
    for pix in pix_codes(text):
        if pix["payload"] not in found:
            found.append(pix["payload"])


def looks_like_pdf(name, content_type):
    return content_type.lower() == "application/pdf" or name.lower().endswith(".pdf")


def one(raw):
    text, attachments, received = read(raw)
    found, reason = [], None
    for name, content_type, data in attachments:
        if not looks_like_pdf(name, content_type):
            continue
        try:
            search(pdf_text(data), received, found)
        except Unread as unread:
            reason = reason or unread.reason
    search(text, received, found)
    return {"found": found, "reason": reason, "refused": None}


def throughput(seconds, files):
    messages = []
    for f in files:
        with open(f, "rb") as fh:
            messages.append(fh.read())
    outcomes = [one(raw) for raw in messages]
    started, cpu_before, count = time.monotonic(), time.thread_time_ns(), 0
    while True:
        for raw in messages:
            one(raw)
        count += len(messages)
        if time.monotonic() - started >= seconds:
            break
    cpu, wall = (time.thread_time_ns() - cpu_before) / 1e9, time.monotonic() - started
    return {"messages": count, "cpu_s": cpu, "wall_s": wall, "outcomes": outcomes}


def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory(file):
    before = peak_kib()
    with open(file, "rb") as fh:
        raw = fh.read()
    after_read = peak_kib()
    text, attachments, received = read(raw)
    parsed = peak_kib()
    found, reason = [], None
    for name, content_type, data in attachments:
        if looks_like_pdf(name, content_type):
            try:
                search(pdf_text(data), received, found)
            except Unread as unread:
                reason = reason or unread.reason
    search(text, received, found)
    return {"bytes": len(raw), "attachments": len(attachments),
            "peak_kib": {"start": before, "file_read": after_read, "parsed": parsed, "end": peak_kib()},
            "outcome": {"found": found, "reason": reason, "refused": None}}


# --- the 10 MiB message --------------------------------------------------

def with_noise(pdf, size, seed):
    """The PDF with an image XObject of `size` bytes of noise (8-bit grey,
    uncompressed: a scan's worth that does not compress) in its first
    page's resources: a bill PDF the size a scanned attachment has."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject, NumberObject
    writer = PdfWriter(clone_from=io.BytesIO(pdf))
    width = 1000
    height = max(1, size // width)
    image = DecodedStreamObject()
    image.set_data(random.Random(seed).randbytes(width * height))
    image.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Image"),
                  NameObject("/Width"): NumberObject(width), NameObject("/Height"): NumberObject(height),
                  NameObject("/ColorSpace"): NameObject("/DeviceGray"),
                  NameObject("/BitsPerComponent"): NumberObject(8)})
    page = writer.pages[0]
    resources = page[NameObject("/Resources")].get_object()
    if "/XObject" not in resources:
        resources[NameObject("/XObject")] = DictionaryObject()
    resources["/XObject"].get_object()[NameObject("/ScanImage")] = writer._add_object(image)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_large(out, base, pdfs, target=10 * 1024 * 1024):
    with open(base, "rb") as fh:
        base_raw = fh.read()
    originals = []
    for path in pdfs:
        with open(path, "rb") as fh:
            originals.append((path.rsplit("/", 1)[-1], fh.read()))

    def build(noise):
        msg = BytesParser(policy=policy.SMTP).parsebytes(base_raw)
        for i, (name, pdf) in enumerate(originals):
            data = with_noise(pdf, noise, i)
            msg.add_attachment(data, maintype="application", subtype="pdf", filename=name)
        return msg.as_bytes()
    # The size grows linearly with the noise: two builds find the slope, then
    # the noise grows until the message is at least `target` bytes.
    small, large = build(100_000), build(200_000)
    slope = 100_000 / (len(large) - len(small))
    noise = 100_000 + int((target - len(small)) * slope)
    raw = build(noise)
    while len(raw) < target:
        noise += int((target - len(raw)) * slope) + 1_000
        raw = build(noise)
    with open(out, "wb") as fh:
        fh.write(raw)
    return {"bytes": len(raw), "attachments": len(originals), "noise_per_pdf": noise}


def main(argv):
    if len(argv) >= 3 and argv[0] == "throughput":
        result = throughput(float(argv[1]), argv[2:])
    elif len(argv) == 2 and argv[0] == "memory":
        result = memory(argv[1])
    elif len(argv) >= 3 and argv[0] == "make-large":
        result = make_large(argv[1], argv[2], argv[3:])
    else:
        raise SystemExit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
