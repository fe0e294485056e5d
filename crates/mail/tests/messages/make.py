#!/usr/bin/env python3
"""Writes the test messages of crates/mail/tests/ with Python's standard
`email` package: an independent implementation of RFC 5322 and MIME, so the
messages are not shaped by the parser that reads them. Each message's
expected facts are written beside it (`<name>.json`). Run from anywhere:
`python3 crates/mail/tests/messages/make.py`; the output is committed and
deterministic (fixed dates, boundaries and Message-IDs)."""

import json
import pathlib
from email import policy
from email.generator import BytesGenerator
from email.message import EmailMessage
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.header import Header
import io
import quopri

HERE = pathlib.Path(__file__).parent
LINE = "34191.09123 34567.800007 01234.567897 1 16560000015990"
DATE = "Sat, 21 Nov 2026 10:15:00 -0300"
PDF = b"%PDF-1.4\n% a stand-in: the PDF path is tested on its own\n%%EOF\n"


def write(name, message, expect):
    # Fixed boundaries: the generator would draw random ones, and the files are committed.
    for i, part in enumerate(p for p in message.walk() if p.get_content_maintype() == "multipart"):
        part.set_boundary(f"b-{name}-{i}")
    buffer = io.BytesIO()
    legacy = not isinstance(message, EmailMessage)
    BytesGenerator(buffer, policy=policy.compat32.clone(linesep="\r\n") if legacy else policy.SMTP).flatten(message)
    (HERE / f"{name}.eml").write_bytes(buffer.getvalue())
    (HERE / f"{name}.json").write_text(json.dumps(expect, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def base(message, subject, msgid):
    legacy = not isinstance(message, EmailMessage)
    name = Header("Cobrança Telecom", "iso-8859-1").encode() if legacy else "Cobrança Telecom"
    message["From"] = f"{name} <cobranca@telecom.example.com>"
    message["To"] = "contas@demo.inbox.kobana.com.br"
    message["Subject"] = subject
    message["Date"] = DATE
    message["Message-ID"] = f"<{msgid}@telecom.example.com>"
    return message


def expect(subject, msgid, text_has, attachments=(), **more):
    out = {
        "from": "cobranca@telecom.example.com",
        "to": "contas@demo.inbox.kobana.com.br",
        "subject": subject,
        "date": "2026-11-21T13:15:00Z",
        "message_id": f"{msgid}@telecom.example.com",
        "text_has": text_has,
        "attachments": list(attachments),
    }
    out.update(more)
    return out


def main():
    # Plain UTF-8, quoted-printable (accents and a long line).
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Sua fatura de novembro chegou", "plain-qp")
    m.set_content(f"Olá! Sua fatura está disponível.\nLinha digitável: {LINE}\nVencimento: 10/12/2026\n",
                  charset="utf-8", cte="quoted-printable")
    write("plain-utf8-qp", m, expect("Sua fatura de novembro chegou", "plain-qp", ["Olá! Sua fatura está disponível.", LINE]))

    # ISO-8859-1, base64 body, RFC 2047 subject in ISO-8859-1.
    m = MIMEText(f"Cobrança de dezembro. Linha: {LINE}\n", "plain", "iso-8859-1")
    del m["Content-Transfer-Encoding"]
    m.replace_header("Content-Type", 'text/plain; charset="iso-8859-1"')
    import base64
    m.set_payload(base64.encodebytes(f"Cobrança de dezembro. Linha: {LINE}\n".encode("iso-8859-1")).decode())
    m["Content-Transfer-Encoding"] = "base64"
    base(m, Header("Cobrança de dezembro", "iso-8859-1").encode(), "latin1-b64")
    write("latin1-base64", m, expect("Cobrança de dezembro", "latin1-b64", ["Cobrança de dezembro.", LINE]))

    # Windows-1252 (a curly quote and the euro sign exist only there), quoted-printable.
    body = f"“Fatura” de serviços — total € 0,00. Linha: {LINE}\n"
    m = MIMEText("", "plain", "us-ascii")
    del m["Content-Transfer-Encoding"]
    m.replace_header("Content-Type", 'text/plain; charset="windows-1252"')
    m.set_payload(quopri.encodestring(body.encode("cp1252")).decode("ascii"))
    m["Content-Transfer-Encoding"] = "quoted-printable"
    base(m, Header("Fatura – serviços", "utf-8").encode(), "cp1252-qp")
    write("windows-1252", m, expect("Fatura – serviços", "cp1252-qp", ["“Fatura” de serviços — total €", LINE]))

    # HTML only.
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Boleto disponível", "html-only")
    m.set_content(f"<html><body><p>Prezado cliente,</p><p>Linha digitável: <b>{LINE}</b></p>"
                  "<!-- comentário --><script>alert(1)</script></body></html>", subtype="html", charset="utf-8")
    write("html-only", m, expect("Boleto disponível", "html-only", ["Prezado cliente,", LINE]))

    # multipart/alternative inside multipart/mixed with a PDF, and multipart/related for an inline image.
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Fatura com anexo", "mixed-pdf")
    m.set_content(f"Segue o boleto em anexo. Linha: {LINE}\n")
    m.add_alternative(f"<p>Segue o boleto em anexo. Linha: <b>{LINE}</b></p>", subtype="html")
    m.add_attachment(PDF, maintype="application", subtype="pdf", filename="boleto-novembro.pdf")
    write("mixed-pdf", m, expect("Fatura com anexo", "mixed-pdf", ["Segue o boleto em anexo.", LINE],
                                 [{"name": "boleto-novembro.pdf", "content_type": "application/pdf", "size": len(PDF)}]))

    # A forwarded bill: message/rfc822 attached to a short note.
    inner = EmailMessage(policy=policy.SMTP)
    base(inner, "Conta de luz", "inner")
    inner.set_content(f"Conta de luz de novembro. Linha: {LINE}\n")
    inner.add_attachment(PDF, maintype="application", subtype="pdf", filename="luz.pdf")
    outer = EmailMessage(policy=policy.SMTP)
    outer["From"] = "Ana <ana@empresa.example.com>"
    outer["To"] = "contas@demo.inbox.kobana.com.br"
    outer["Subject"] = "Fwd: Conta de luz"
    outer["Date"] = DATE
    outer["Message-ID"] = "<forward@empresa.example.com>"
    outer.set_content("Pode pagar esta, por favor?\n")
    outer.add_attachment(inner)
    write("forwarded", outer, {
        "from": "ana@empresa.example.com", "to": "contas@demo.inbox.kobana.com.br", "subject": "Fwd: Conta de luz",
        "date": "2026-11-21T13:15:00Z", "message_id": "forward@empresa.example.com",
        "text_has": ["Pode pagar esta, por favor?", "Conta de luz de novembro.", LINE],
        "attachments": [{"name": "luz.pdf", "content_type": "application/pdf", "size": len(PDF)}],
    })

    # Authentication-Results kept as the receiving server wrote it.
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Autenticado", "auth")
    m["Authentication-Results"] = "mx.kobana.example; spf=pass smtp.mailfrom=telecom.example.com; dkim=pass header.d=telecom.example.com; dmarc=pass header.from=telecom.example.com"
    m.set_content(f"Linha: {LINE}\n")
    write("authenticated", m, expect("Autenticado", "auth", [LINE],
          verdicts={"spf": "pass", "dkim": "pass", "dmarc": "pass", "by": "mx.kobana.example"},
          authentication="mx.kobana.example; spf=pass smtp.mailfrom=telecom.example.com; dkim=pass header.d=telecom.example.com; dmarc=pass header.from=telecom.example.com"))


def crc16(data):
    """CRC-16/CCITT-FALSE, as the BR Code specifies it."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def tlv(tag, value):
    return f"{tag:02d}{len(value):02d}{value}"


def pix_code(key, name, city, amount=None, txid="***"):
    account = tlv(0, "br.gov.bcb.pix") + tlv(1, key)
    body = tlv(0, "01") + tlv(26, account) + tlv(52, "0000") + tlv(53, "986")
    if amount is not None:
        body += tlv(54, amount)
    body += tlv(58, "BR") + tlv(59, name) + tlv(60, city) + tlv(62, tlv(5, txid)) + "6304"
    return body + f"{crc16(body.encode()):04X}"


# The Central Bank manual's example payload (an oracle neither generator wrote).
BCB_EXAMPLE = ("00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR"
               "5913Fulano de Tal6008BRASILIA62070503***63041D3D")


def hybrids():
    # A boleto híbrido: the line and a Pix copia-e-cola code without an amount.
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Boleto híbrido", "hybrid")
    m.set_content(f"Pague pelo boleto ou pelo Pix.\nLinha digitável: {LINE}\nPix copia e cola: {BCB_EXAMPLE}\n")
    write("hybrid", m, expect("Boleto híbrido", "hybrid", [LINE, BCB_EXAMPLE],
          pix={"key": "123e4567-e12b-12d1-a456-426655440000", "url": None, "merchant_name": "Fulano de Tal",
               "merchant_city": "BRASILIA", "amount_cents": None, "txid": "***"}, amounts_disagree=False))

    # A Pix code whose amount is not the boleto's (R$ 100,00 against R$ 159,90).
    code = pix_code("financeiro@telecom.example.com", "TELECOM SA", "SAO PAULO", amount="100.00", txid="NOV2026")
    m = EmailMessage(policy=policy.SMTP)
    base(m, "Boleto e Pix", "hybrid-mismatch")
    m.set_content(f"Linha digitável: {LINE}\nPix: {code}\n")
    write("hybrid-mismatch", m, expect("Boleto e Pix", "hybrid-mismatch", [LINE, code],
          pix={"key": "financeiro@telecom.example.com", "url": None, "merchant_name": "TELECOM SA",
               "merchant_city": "SAO PAULO", "amount_cents": 10000, "txid": "NOV2026"}, amounts_disagree=True))


if __name__ == "__main__":
    hybrids()
    main()
