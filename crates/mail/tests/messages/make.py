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
          authentication="mx.kobana.example; spf=pass smtp.mailfrom=telecom.example.com; dkim=pass header.d=telecom.example.com; dmarc=pass header.from=telecom.example.com"))


if __name__ == "__main__":
    main()
