#!/usr/bin/env python3
"""Builds tests/bills/: real bill e-mails carrying real PDF boletos, made by
independent public tools, with the facts each one must yield written beside it.

What it makes (see README.md for the file list):
  * pdf/bNN-*.pdf   boletos rendered by **pycobranca** (PyPI, BSD-3; 19 banks,
    FEBRABAN due-date factor restarted at 1000 on 2025-02-22). The digitable
    line, barcode, amount, due date and bank code recorded in the JSON are the
    values pycobranca itself returns (`emite_boleto()` / the bank object), not
    recomputed here.
  * Pix "copia e cola" codes (static EMV BR Codes) built and parsed back by
    **pix-utils** (npm), through pix.js. Where a Pix goes into a PDF, pycobranca
    draws its QR (given the ready payload) and make.py writes the payload as one
    line of text on the page (reportlab overlay merged with pypdf).
  * <name>.eml      messages built with Python's standard `email` package, and
    <name>.json     what a reader must find in them.
  * hostile PDFs (scan, encrypted, broken, bomb, many-pages), each in its own
    message: the image-only page is rendered with pypdfium2 + Pillow, the
    encryption is pypdf's (RC4-128, user password), the bomb and the
    10,000-page file are written byte by byte here (zlib, in chunks).
  * every digitable line and barcode is checked by a second, independent
    oracle, **@mrmgomes/boleto-utils** (npm), through oracle.js; its verdicts go
    into each bill's `oracle` object. make.py stops if the oracle calls a line
    or barcode invalid, and records (and prints) any field where it disagrees
    with the generator.

How attachments are counted (`source: "attachment:<n>"`): walk the message
with Python's `Message.walk()` (depth first, document order, descending into
message/rfc822 parts); every part that is not multipart/* or message/* and has
`Content-Disposition: attachment` is an attachment; n is its 0-based index in
that walk. So a forwarded message's inner PDF counts as an attachment of the
outer message, and a non-PDF attachment before a PDF shifts the PDF's index.
`source: "body"` means the bill is only in the text of the message.

Determinism: fixed dates, MIME boundaries, Message-IDs and PDF IDs; reportlab
runs with `rl_config.invariant = 1`; pypdf's random file identifier is pinned
before encrypting. Running make.py twice gives identical bytes.

How to run (Python >= 3.12, which pycobranca requires; Node >= 18). The
environments live outside the repository:

    python3.12 -m venv ~/.cache/bills/venv
    ~/.cache/bills/venv/bin/pip install -r tests/bills/requirements.txt
    mkdir -p ~/.cache/bills/node
    cp tests/bills/package.json tests/bills/package-lock.json ~/.cache/bills/node/
    npm ci --prefix ~/.cache/bills/node --ignore-scripts
    ~/.cache/bills/venv/bin/python tests/bills/make.py

BILLS_NODE_MODULES overrides where the node_modules are
(default ~/.cache/bills/node/node_modules).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zlib
from datetime import date, datetime, timezone
from decimal import Decimal
from email import policy
from email.charset import BASE64, Charset
from email.generator import BytesGenerator
from email.header import Header
from email.headerregistry import Address
from email.message import EmailMessage
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.parser import BytesParser
from email.utils import format_datetime, parsedate_to_datetime

from reportlab import rl_config

rl_config.invariant = 1  # fixed /ID, no timestamps: byte-identical PDFs

import pycobranca  # noqa: E402
import pypdf  # noqa: E402
import pypdfium2  # noqa: E402
from PIL import Image  # noqa: E402
from pycobranca.bancos import (  # noqa: E402
    BancoDoBrasil,
    Bradesco,
    Caixa,
    Itau,
    Santander,
    Sicoob,
    Sicredi,
)
from pycobranca.render import emite_boleto  # noqa: E402
from pypdf.generic import ArrayObject, ByteStringObject  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.utils import ImageReader  # noqa: E402
from reportlab.pdfbase.pdfmetrics import stringWidth  # noqa: E402
from reportlab.pdfgen.canvas import Canvas  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
PDF_DIR = HERE / "pdf"
TO = "contas@demo.inbox.kobana.com.br"
GENERATOR = f"pycobranca {pycobranca.__version__}"
MAX_EML = 2 * 1024 * 1024
NODE_MODULES = pathlib.Path(
    os.environ.get("BILLS_NODE_MODULES", pathlib.Path.home() / ".cache/bills/node/node_modules")
)


# --------------------------------------------------------------------------
# Inputs: documents, people, bills
# --------------------------------------------------------------------------


def _dv_cnpj(base: str) -> str:
    def dv(digits: str) -> str:
        weights = list(range(len(digits) - 7, 1, -1)) + list(range(9, 1, -1))
        total = sum(int(d) * w for d, w in zip(digits, weights))
        r = total % 11
        return "0" if r < 2 else str(11 - r)

    first = dv(base)
    return first + dv(base + first)


def cnpj(base12: str) -> str:
    d = base12 + _dv_cnpj(base12)
    return f"{d[0:2]}.{d[2:5]}.{d[5:8]}/{d[8:12]}-{d[12:14]}"


def cpf(base9: str) -> str:
    def dv(digits: str) -> str:
        total = sum(int(d) * w for d, w in zip(digits, range(len(digits) + 1, 1, -1)))
        r = total % 11
        return "0" if r < 2 else str(11 - r)

    first = dv(base9)
    d = base9 + first + dv(base9 + first)
    return f"{d[0:3]}.{d[3:6]}.{d[6:9]}-{d[9:11]}"


PAGADOR = dict(
    sacado="Marina Albuquerque Demo",
    sacado_documento=cpf("529982247"),
    sacado_endereco="Rua das Palmeiras, 250, ap. 31 - Pinheiros - São Paulo/SP - 05422-000",
)

# Each bill: the bank class and its fields, the model pycobranca draws, and
# where its Pix goes (None, "pdf" or "body"). Amounts and dates are inputs;
# every derived value in the JSON is read back from pycobranca.
BILLS = {
    "b01": dict(
        slug="itau",
        bank=Itau,
        model="moderno",
        fields=dict(
            valor="1599.90",
            cedente="Companhia Paulista de Luz Demo S.A.",
            cedente_documento=cnpj("112223330001"),
            cedente_endereco="Av. Paulista, 1000 - Bela Vista - São Paulo/SP",
            cedente_cidade="SAO PAULO",
            agencia="1234",
            conta="56789",
            carteira="109",
            nosso_numero="20261101",
            numero_documento="LUZ-2026-11",
            data_documento=date(2026, 11, 20),
            data_vencimento=date(2026, 12, 10),
            instrucoes=["Conta de energia elétrica - referência 11/2026", "Após o vencimento, multa de 2%"],
        ),
        pix=dict(
            where="pdf",
            merchantName="Cia Paulista de Luz",
            merchantCity="SAO PAULO",
            pixKey="financeiro@luz.example.com",
            txid="LUZ202611",
            amount="1599.90",
        ),
    ),
    "b02": dict(
        slug="bb",
        bank=BancoDoBrasil,
        model="classico",
        fields=dict(
            valor="12345.67",
            cedente="Condomínio Edifício Jacarandá",
            cedente_documento=cnpj("114447770001"),
            cedente_endereco="Rua Jacarandá, 77 - Jardins - São Paulo/SP",
            agencia="3064",
            conta="12345",
            carteira="17",
            convenio="2345678",
            nosso_numero="1126",
            numero_documento="COND-2027-10",
            data_documento=date(2026, 11, 18),
            data_vencimento=date(2027, 11, 19),
            instrucoes=["Rateio de obra extraordinária - fachada", "Não receber após 30 dias do vencimento"],
        ),
        pix=None,
    ),
    "b03": dict(
        slug="santander",
        bank=Santander,
        model="moderno",
        fields=dict(
            valor="289.50",
            cedente="Telefonia Horizonte Demo Ltda.",
            cedente_documento=cnpj("123456780001"),
            cedente_endereco="Rua Funchal, 418 - Vila Olímpia - São Paulo/SP",
            cedente_cidade="SAO PAULO",
            agencia="0201",
            conta="1300017",
            convenio="4471826",
            carteira="101",
            nosso_numero="55012026",
            numero_documento="TEL-887766",
            data_documento=date(2026, 11, 19),
            data_vencimento=date(2026, 12, 5),
            instrucoes=["Plano Família 4 linhas - novembro/2026"],
        ),
        pix=dict(
            where="body",
            merchantName="Telefonia Horizonte",
            merchantCity="SAO PAULO",
            pixKey="+5511987654321",
            txid="TEL887766",
            amount="289.50",
        ),
    ),
    "b04": dict(
        slug="caixa",
        bank=Caixa,
        model="classico",
        fields=dict(
            valor="87.35",
            cedente="Saneamento Municipal de Campinas Demo",
            cedente_documento=cnpj("468011230001"),
            cedente_endereco="Av. da Saudade, 500 - Ponte Preta - Campinas/SP",
            agencia="0296",
            conta="00003301",
            convenio="654321",
            carteira="14",
            nosso_numero="778899",
            numero_documento="AGUA-11-2026",
            data_documento=date(2026, 11, 16),
            data_vencimento=date(2026, 12, 20),
            instrucoes=["Fornecimento de água e esgoto - leitura de 12/11/2026"],
        ),
        pix=None,
    ),
    "b05": dict(
        slug="bradesco",
        bank=Bradesco,
        model="moderno",
        fields=dict(
            valor="4200.00",
            cedente="Colégio São João Demo",
            cedente_documento=cnpj("334455660001"),
            cedente_endereco="Rua Dr. Arnaldo, 90 - Sumaré - São Paulo/SP",
            cedente_cidade="SAO PAULO",
            agencia="2372",
            conta="0123456",
            carteira="09",
            nosso_numero="12027020001",
            numero_documento="MENS-02-2027",
            data_documento=date(2026, 11, 21),
            data_vencimento=date(2027, 2, 1),
            instrucoes=["Mensalidade escolar fevereiro/2027", "Pagamento via Pix até o vencimento: desconto de R$ 200,00"],
        ),
        # Deliberately not the boleto's amount: the school's Pix carries the discount.
        pix=dict(
            where="pdf",
            merchantName="Colegio Sao Joao",
            merchantCity="SAO PAULO",
            pixKey=cnpj("334455660001").replace(".", "").replace("/", "").replace("-", ""),
            txid="MENS022027",
            amount="4000.00",
        ),
    ),
    "b06": dict(
        slug="sicoob",
        bank=Sicoob,
        model="moderno",
        fields=dict(
            valor="350.00",
            cedente="NetVale Provedor de Internet Demo Ltda.",
            cedente_documento=cnpj("556677880001"),
            cedente_endereco="Rua XV de Novembro, 1500 - Centro - Blumenau/SC",
            cedente_cidade="BLUMENAU",
            agencia="3069",
            convenio="1234567",
            carteira="1",
            nosso_numero="42",
            numero_documento="NET-2026-11-042",
            data_documento=date(2026, 11, 10),
            data_vencimento=date(2026, 11, 30),
            instrucoes=["Internet fibra 600 Mb - novembro/2026"],
        ),
        pix=None,
    ),
    "b07": dict(
        slug="sicredi",
        bank=Sicredi,
        model="classico",
        fields=dict(
            valor="99.99",
            cedente="Associação Clube de Campo Demo",
            cedente_documento=cnpj("778899000001"),
            cedente_endereco="Estrada do Lago, km 3 - Gramado/RS",
            agencia="0710",
            posto="02",
            convenio="13579",
            byte_idt="2",
            carteira="1",
            nosso_numero="314",
            numero_documento="SOCIO-0314",
            data_documento=date(2026, 11, 21),
            data_vencimento=date(2027, 3, 10),
            instrucoes=["Mensalidade social março/2027"],
        ),
        pix=None,
    ),
    "b08": dict(
        slug="bb",
        bank=BancoDoBrasil,
        model="moderno",
        fields=dict(
            valor="1050.00",
            cedente="Clube de Campo Demo - Eventos",
            cedente_documento=cnpj("778899000002"),
            cedente_endereco="Estrada do Lago, km 3 - Gramado/RS",
            cedente_cidade="GRAMADO",
            agencia="0452",
            conta="998877",
            carteira="18",
            convenio="654321",
            nosso_numero="3021",
            numero_documento="EVT-2027-06",
            data_documento=date(2026, 11, 21),
            data_vencimento=date(2027, 6, 30),
            instrucoes=["Reserva do salão de festas - 30/06/2027"],
        ),
        pix=dict(
            where="pdf",
            merchantName="Clube de Campo Demo",
            merchantCity="GRAMADO",
            pixKey="7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
            txid="EVT202706",
            amount="1050.00",
        ),
    ),
    "b09": dict(
        slug="caixa",
        bank=Caixa,
        model="moderno",
        fields=dict(
            valor="45.90",
            cedente="Gás Encanado Demo S.A.",
            cedente_documento=cnpj("990011220001"),
            cedente_endereco="Rua do Gasômetro, 12 - Brás - São Paulo/SP",
            agencia="1679",
            conta="00001001",
            convenio="112233",
            carteira="24",
            nosso_numero="90001234",
            numero_documento="GAS-11-2026",
            data_documento=date(2026, 11, 14),
            data_vencimento=date(2026, 12, 28),
            instrucoes=["Consumo de gás 11/2026"],
        ),
        pix=None,
    ),
    # Inside the hostile PDFs: b10 only as an image (scan), b11 encrypted.
    "b10": dict(
        slug="santander",
        bank=Santander,
        model="classico",
        fields=dict(
            valor="512.30",
            cedente="Seguradora Amparo Demo S.A.",
            cedente_documento=cnpj("221133440001"),
            cedente_endereco="Av. Brigadeiro Faria Lima, 3477 - Itaim Bibi - São Paulo/SP",
            agencia="3003",
            conta="1300042",
            convenio="7654321",
            carteira="102",
            nosso_numero="8000123",
            numero_documento="APOL-5566",
            data_documento=date(2026, 11, 12),
            data_vencimento=date(2027, 1, 5),
            instrucoes=["Seguro residencial - parcela 3/10"],
        ),
        pix=None,
    ),
    "b11": dict(
        slug="itau",
        bank=Itau,
        model="moderno",
        fields=dict(
            valor="777.77",
            cedente="Clínica Bem Viver Demo Ltda.",
            cedente_documento=cnpj("443322110001"),
            cedente_endereco="Rua Augusta, 2000 - Consolação - São Paulo/SP",
            agencia="0057",
            conta="12340",
            carteira="109",
            nosso_numero="77700011",
            numero_documento="PLANO-04-2027",
            data_documento=date(2026, 11, 13),
            data_vencimento=date(2027, 4, 20),
            instrucoes=["Plano de saúde empresarial abril/2027"],
        ),
        pix=None,
    ),
}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cents(text: str) -> int:
    return int((Decimal(text) * 100).quantize(Decimal(1)))


def run_node(script: str, payload) -> list:
    if not (NODE_MODULES / "pix-utils").is_dir():
        sys.exit(
            f"node_modules not found at {NODE_MODULES}: see the docstring "
            "(npm ci --prefix ~/.cache/bills/node), or set BILLS_NODE_MODULES"
        )
    env = dict(os.environ, NODE_PATH=str(NODE_MODULES), TZ="UTC")
    done = subprocess.run(
        ["node", str(HERE / script)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{script} failed:\n{done.stderr.decode()}")
    return json.loads(done.stdout)


def crc16_ccitt_false(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def garbage(n: int, seed: bytes) -> bytes:
    """Deterministic noise: a SHA-256 chain."""
    out, block = b"", seed
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out += block
    return out[:n]


def pix_overlay(pdf: bytes, payload: str) -> bytes:
    """Writes the Pix copia-e-cola as one line of text near the foot of the
    page and merges it onto the generator's page with pypdf."""
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=A4)
    width = A4[0] - 2 * 28.35
    size = 7.0
    while stringWidth(payload, "Helvetica", size) > width:
        size -= 0.25
    assert size >= 5.0, f"Pix payload too long for one line: {payload}"
    canvas.setFont("Helvetica-Bold", 8)
    canvas.drawString(28.35, 150, "Pix Copia e Cola (pague também pelo app do seu banco):")
    canvas.setFont("Helvetica", size)
    canvas.drawString(28.35, 138, payload)
    canvas.showPage()
    canvas.save()
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.pages[0].merge_page(pypdf.PdfReader(io.BytesIO(buf.getvalue())).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# --------------------------------------------------------------------------
# Boletos
# --------------------------------------------------------------------------


def make_pix() -> dict:
    specs = [dict(id=key, **{k: v for k, v in bill["pix"].items() if k != "where"})
             for key, bill in BILLS.items() if bill["pix"]]
    made = {}
    for item in run_node("pix.js", specs):
        payload = item["payload"]
        assert payload.startswith("000201") and payload[-8:-4] == "6304", payload
        crc = f"{crc16_ccitt_false(payload[:-4].encode()):04X}"
        assert crc == payload[-4:], f"CRC mismatch in {item['id']}: {crc} vs {payload[-4:]}"
        assert "br.gov.bcb.pix" in payload
        made[item["id"]] = {
            "payload": payload,
            "merchant_name": item["merchant_name"],
            "city": item["merchant_city"],
            "key": item["key"],
            "txid": item["txid"],
            "amount_cents": round(item["amount"] * 100),
            "library": item["library"],
            "crc16_ccitt_false_ok": True,
            "in": BILLS[item["id"]]["pix"]["where"],
        }
    return made


def make_boletos(pix: dict) -> dict:
    out = {}
    for key, spec in BILLS.items():
        fields = dict(PAGADOR, **spec["fields"])
        if spec["pix"] and spec["pix"]["where"] == "pdf":
            fields["pix_copia_cola"] = pix[key]["payload"]  # pycobranca draws its QR
        boleto = spec["bank"](**fields)
        issued = emite_boleto(boleto, modelo=spec["model"])
        pdf = issued.pdf
        if spec["pix"] and spec["pix"]["where"] == "pdf":
            pdf = pix_overlay(pdf, pix[key]["payload"])
        due = datetime.strptime(issued.vencimento, "%d/%m/%Y").date()
        record = {
            "digitable_line": issued.linha_digitavel,
            "barcode": issued.codigo_barras,
            "amount_cents": boleto.valor_centavos,
            "amount_printed": issued.valor_documento,
            "due_date": due.isoformat(),
            "bank_code": boleto.codigo,
            "bank_name": boleto.nome,
            "generator": GENERATOR,
            "generator_model": spec["model"],
            "pix": pix.get(key),
        }
        if record["pix"]:
            record["amounts_disagree"] = record["pix"]["amount_cents"] != record["amount_cents"]
        out[key] = {"record": record, "pdf": pdf, "name": f"{key}-{spec['slug']}-{boleto.codigo}.pdf"}
    return out


def barcode_rule_divergence(barcode: str) -> str | None:
    """Why boleto-utils rejects a bank barcode whose general check digit is right.

    FEBRABAN's bank-slip rule (layout of the barcode, position 5): weights 2..9
    from the right over the other 43 digits, DV = 11 - (sum mod 11), and a
    result of 0, 10 or 11 becomes 1. boleto-utils' `calculaMod11` applies the
    collection-slip (arrecadação) rule instead, where a remainder of 0 or 1
    gives 0. The two agree except when the remainder is 0 or 1, where the bank
    rule says 1 and the library says 0. Returns the explanation when that is
    the case here, else None (then the rejection stands as a problem).
    """
    body = barcode[:4] + barcode[5:]
    total = sum(int(d) * (2 + i % 8) for i, d in enumerate(reversed(body)))
    remainder = total % 11
    if barcode[4] == "1" and remainder in (0, 1):
        return (f"the general check digit is 1 by FEBRABAN's bank-slip rule (sum mod 11 = {remainder}); "
                "boleto-utils' calculaMod11 applies the collection-slip rule (remainder 0 or 1 -> 0) "
                "to bank barcodes; the third opinion accepts the line, whose barcode this is")
    return None


def run_oracle(boletos: dict) -> list[str]:
    """Adds each bill's `oracle` object; returns the disagreements found.

    Stops if @mrmgomes/boleto-utils calls a digitable line invalid, or if it
    rejects a barcode that the third opinion (@brazilian-utils) does not
    confirm through the line. A barcode that boleto-utils alone rejects is
    recorded as it said (`barcode_valid: false`) and listed as a disagreement.
    """
    verdicts = run_node("oracle.js", [
        {"id": k, "line": b["record"]["digitable_line"], "barcode": b["record"]["barcode"]}
        for k, b in boletos.items()
    ])
    problems = []
    for v in verdicts:
        rec = boletos[v["id"]]["record"]
        line, bar, third = v["line"], v["barcode"], v["third_opinion"]
        if not line["valid"]:
            sys.exit(f"oracle calls the line of {v['id']} invalid: {json.dumps(v, ensure_ascii=False)}")
        third_agrees = (third["line_valid"] and third["amount_cents"] == rec["amount_cents"]
                        and third["due_date"] == rec["due_date"] and third["bank_code"] == rec["bank_code"])
        if not bar["valid"] and not third_agrees:
            sys.exit(f"oracle calls the barcode of {v['id']} invalid and the third opinion does not "
                     f"confirm the line: {json.dumps(v, ensure_ascii=False)}")
        oracle = {
            "library": v["library"],
            "valid": line["valid"] and bar["valid"],
            "line_valid": line["valid"],
            "barcode_valid": bar["valid"],
            "barcode_message": bar["message"],
            "boleto_kind": line["boleto_kind"],
            "barcode_from_line": line["barcode"],
            "line_formatted_from_barcode": v["line_formatted_from_barcode"],
            "amount_cents": round(line["amount"] * 100),
            "due_date": line["due_date_new_factor"],
            "due_date_old_factor": line["due_date_old_factor"],
            "bank_code": line["barcode"][:3],
            "third_opinion": third,
        }
        digits = "".join(c for c in rec["digitable_line"] if c.isdigit())
        checks = {
            "line_valid": (line["valid"], True),
            "barcode_valid": (bar["valid"], True),
            "barcode_from_line": (line["barcode"], rec["barcode"]),
            "line_formatted_from_barcode": (v["line_formatted_from_barcode"], rec["digitable_line"]),
            "amount_cents": (oracle["amount_cents"], rec["amount_cents"]),
            "due_date": (oracle["due_date"], rec["due_date"]),
            "bank_code": (oracle["bank_code"], rec["bank_code"]),
            "third_opinion.line_valid": (third["line_valid"], True),
            "third_opinion.line_digits": (third["line_digits"], digits),
            "third_opinion.amount_cents": (third["amount_cents"], rec["amount_cents"]),
            "third_opinion.due_date": (third["due_date"], rec["due_date"]),
            "third_opinion.bank_code": (third["bank_code"], rec["bank_code"]),
        }
        if bar["valid"]:
            checks["line_digits_from_barcode"] = (bar["line_digits"], digits)
            checks["amount_from_barcode"] = (round(bar["amount"] * 100), rec["amount_cents"])
            checks["due_date_from_barcode"] = (bar["due_date_new_factor"], rec["due_date"])
        disagree = {k: {"oracle": a, "generator": b} for k, (a, b) in checks.items() if a != b}
        cause = barcode_rule_divergence(rec["barcode"]) if not bar["valid"] else None
        if cause:
            # Explained, not a defect of the bill: recorded, not listed as a problem.
            oracle["barcode_disagreement_cause"] = cause
            disagree.pop("barcode_valid", None)
        oracle["agrees_with_generator"] = not disagree
        if disagree:
            oracle["disagreements"] = disagree
            problems.append(f"{v['id']}: {json.dumps(disagree, ensure_ascii=False)}")
        rec["oracle"] = oracle
    return problems


# --------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------


def flatten(name: str, message) -> bytes:
    # Fixed boundaries: the generator would draw random ones.
    for i, part in enumerate(p for p in message.walk() if p.get_content_maintype() == "multipart"):
        part.set_boundary(f"=_bill-{name}-{i}")
    buffer = io.BytesIO()
    legacy = not isinstance(message, EmailMessage)
    pol = policy.compat32.clone(linesep="\r\n") if legacy else policy.SMTP
    BytesGenerator(buffer, policy=pol).flatten(message)
    return buffer.getvalue()


def attachments_of(raw: bytes) -> list:
    """The attachment list by the rule in the docstring, re-read from the bytes."""
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    out = []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_maintype() in ("multipart", "message"):
            continue
        if part.get_content_disposition() == "attachment":
            out.append(part)
    return out


def headers(m, *, name, addr, subject, when, msgid, legacy=False):
    if legacy:
        m["From"] = f"{name} <{addr}>"
    else:
        m["From"] = Address(display_name=name, addr_spec=addr)
    m["To"] = TO
    m["Subject"] = subject
    m["Date"] = when
    m["Message-ID"] = f"<{msgid}>"


def new_message() -> EmailMessage:
    return EmailMessage(policy=policy.SMTP)


def pdf_part(m: EmailMessage, boleto: dict, filename: str | None = None):
    m.add_attachment(boleto["pdf"], maintype="application", subtype="pdf",
                     filename=filename or boleto["name"])


class Corpus:
    def __init__(self, boletos: dict):
        self.boletos = boletos
        self.files: dict[str, bytes] = {}
        self.checks: list[tuple[str, dict]] = []

    def bill(self, key: str, source: str, in_body: str | bool = False) -> dict:
        b = self.boletos[key]
        rec = dict(b["record"])
        rec["source"] = source
        rec["in_body"] = in_body
        rec["pdf"] = f"pdf/{b['name']}" if source != "body" else None
        rec["bill_id"] = key
        return rec

    def write(self, name: str, message, *, from_addr: str, subject: str, msgid: str,
              bills: list, **more):
        raw = flatten(name, message)
        assert len(raw) < MAX_EML, f"{name}.eml is {len(raw)} bytes"
        parsed = BytesParser(policy=policy.default).parsebytes(raw)
        when = parsedate_to_datetime(parsed["Date"]).astimezone(timezone.utc)
        atts = attachments_of(raw)
        expect = {
            "from": from_addr,
            "to": TO,
            "subject": subject,
            "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "message_id": msgid,
            "attachments": [
                {
                    "index": i,
                    "content_type": p.get_content_type(),
                    "filename": p.get_filename(),
                    "size": len(p.get_payload(decode=True)),
                    "sha256": sha256(p.get_payload(decode=True)),
                }
                for i, p in enumerate(atts)
            ],
            "bills": bills,
            "generator": GENERATOR,
        }
        expect.update(more)
        self.files[f"{name}.eml"] = raw
        self.files[f"{name}.json"] = (json.dumps(expect, ensure_ascii=False, indent=2, sort_keys=True)
                                      + "\n").encode()
        self.checks.append((name, expect))


def build_messages(corpus: Corpus, hostile: dict):
    B = corpus.boletos

    # 1. plain text, UTF-8, quoted-printable + PDF (Itaú, Pix in the PDF).
    b = B["b01"]["record"]
    m = new_message()
    subject = "Sua conta de luz de novembro/2026 chegou"
    headers(m, name="Cia Paulista de Luz", addr="faturas@luz.example.com", subject=subject,
            when="Fri, 20 Nov 2026 08:30:00 -0300", msgid="plain-utf8-qp.20261120@luz.example.com")
    m.set_content(
        "Olá, Marina!\n\n"
        "Sua fatura de energia elétrica de novembro/2026 está disponível.\n"
        f"Valor: R$ {b['amount_printed']} — vencimento em 10/12/2026.\n\n"
        f"Linha digitável: {b['digitable_line']}\n\n"
        "O boleto segue em anexo, com o Pix Copia e Cola impresso no rodapé.\n"
        "Atenciosamente,\nCia Paulista de Luz — Central de Relacionamento\n",
        charset="utf-8", cte="quoted-printable")
    pdf_part(m, B["b01"], "fatura-luz-novembro-2026.pdf")
    corpus.write("plain-utf8-qp", m, from_addr="faturas@luz.example.com", subject=subject,
                 msgid="plain-utf8-qp.20261120@luz.example.com",
                 bills=[corpus.bill("b01", "attachment:0", in_body="formatted")])

    # 2. ISO-8859-1 body in base64 + PDF (Banco do Brasil, 12.345,67); the body
    #    has the line as 47 bare digits.
    b = B["b02"]["record"]
    m = new_message()
    subject = "Cobrança extraordinária — rateio da fachada"
    headers(m, name="Administração Condomínio Jacarandá", addr="sindico@jacaranda.example.com",
            subject=subject, when="Wed, 18 Nov 2026 19:05:00 -0300",
            msgid="latin1-base64.20261118@jacaranda.example.com")
    digits = "".join(c for c in b["digitable_line"] if c.isdigit())
    m.set_content(
        "Prezados condôminos,\n\n"
        "Conforme aprovado em assembléia, segue a cobrança do rateio da obra da fachada.\n"
        f"Valor: R$ {b['amount_printed']} - vencimento: 19/11/2027.\n"
        f"Código para pagamento: {digits}\n\n"
        "Atenciosamente,\nA Administração\n",
        charset="iso-8859-1", cte="base64")
    pdf_part(m, B["b02"], "rateio-fachada.pdf")
    corpus.write("latin1-base64", m, from_addr="sindico@jacaranda.example.com", subject=subject,
                 msgid="latin1-base64.20261118@jacaranda.example.com",
                 bills=[corpus.bill("b02", "attachment:0", in_body="digits")])

    # 3. Windows-1252 HTML only + PDF (Caixa); no line in the body.
    m = new_message()
    subject = "Conta de água – dezembro"
    headers(m, name="Saneamento Campinas", addr="naoresponda@agua.example.com", subject=subject,
            when="Mon, 16 Nov 2026 06:00:00 -0300", msgid="windows-1252-html.20261116@agua.example.com")
    html = (
        "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">"
        "<title>Conta de água</title></head><body>"
        "<p>Prezado(a) cliente,</p>"
        "<p>Sua conta de água e esgoto – referência “novembro/2026” – foi emitida.</p>"
        "<p>O boleto está no arquivo PDF anexo. Não há código de barras neste e‑mail "
        "por motivos de segurança…</p>"
        "<p>Dúvidas? Ligue 0800 000 0000.</p>"
        "</body></html>\n"
    ).replace("e‑mail", "e-mail")
    m.set_content(html, subtype="html", charset="windows-1252", cte="quoted-printable")
    pdf_part(m, B["b04"], "conta-agua-novembro-2026.pdf")
    corpus.write("windows-1252-html", m, from_addr="naoresponda@agua.example.com", subject=subject,
                 msgid="windows-1252-html.20261116@agua.example.com",
                 bills=[corpus.bill("b04", "attachment:0", in_body=False)])

    # 4. multipart/mixed [ multipart/alternative (text, html), PDF ] (Santander);
    #    the Pix copia-e-cola is only in the body (both alternatives).
    b = B["b03"]["record"]
    pix = b["pix"]["payload"]
    m = new_message()
    subject = "Fatura Telefonia Horizonte - vencimento 05/12/2026"
    headers(m, name="Telefonia Horizonte", addr="fatura@telefonia.example.com", subject=subject,
            when="Thu, 19 Nov 2026 14:22:10 -0300", msgid="alternative.20261119@telefonia.example.com")
    m.set_content(
        "Sua fatura chegou!\n\n"
        f"Total: R$ {b['amount_printed']}\nVencimento: 05/12/2026\n"
        f"Código de barras (linha digitável): {b['digitable_line']}\n\n"
        f"Prefere Pix? Copie o código abaixo (Pix Copia e Cola):\n{pix}\n",
        charset="utf-8", cte="quoted-printable")
    m.add_alternative(
        "<html><body><h2>Sua fatura chegou!</h2>"
        f"<p>Total: <b>R$ {b['amount_printed']}</b><br>Vencimento: 05/12/2026</p>"
        f"<p>Linha digitável:<br><code>{b['digitable_line']}</code></p>"
        f"<p>Prefere Pix? Pix Copia e Cola:<br><code>{pix}</code></p>"
        "</body></html>\n",
        subtype="html", charset="utf-8", cte="quoted-printable")
    pdf_part(m, B["b03"], "fatura-telefonia-2026-11.pdf")
    corpus.write("alternative", m, from_addr="fatura@telefonia.example.com", subject=subject,
                 msgid="alternative.20261119@telefonia.example.com",
                 bills=[corpus.bill("b03", "attachment:0", in_body="formatted")])

    # 5. forwarded: the original message attached as message/rfc822 (Sicoob).
    inner = new_message()
    headers(inner, name="NetVale Internet", addr="cobranca@netvale.example.com",
            subject="Boleto NetVale - novembro/2026", when="Tue, 10 Nov 2026 09:00:00 -0300",
            msgid="netvale-original.20261110@netvale.example.com")
    inner.set_content("Olá! Segue em anexo o boleto da sua internet de novembro.\nEquipe NetVale\n",
                      charset="utf-8", cte="quoted-printable")
    pdf_part(inner, B["b06"], "boleto-netvale-2026-11.pdf")
    m = new_message()
    subject = "Fwd: Boleto NetVale - novembro/2026"
    headers(m, name="Marina Albuquerque", addr="marina@pessoal.example.com", subject=subject,
            when="Sat, 21 Nov 2026 11:40:00 -0300", msgid="forwarded.20261121@pessoal.example.com")
    m.set_content("Pode pagar este, por favor? Vai anexo o e-mail original.\n\nMarina\n",
                  charset="utf-8", cte="quoted-printable")
    m.add_attachment(inner, filename="Boleto NetVale - novembro-2026.eml")
    corpus.write("forwarded", m, from_addr="marina@pessoal.example.com", subject=subject,
                 msgid="forwarded.20261121@pessoal.example.com",
                 bills=[corpus.bill("b06", "attachment:0", in_body=False)],
                 forwarded={"inner_message_id": "netvale-original.20261110@netvale.example.com",
                            "inner_from": "cobranca@netvale.example.com"})

    # 6. two boletos from two banks (Sicredi + Banco do Brasil with Pix in the PDF),
    #    after a CSV attachment; no line in the body.
    m = new_message()
    subject = "Clube de Campo: mensalidade de março e reserva do salão"
    headers(m, name="Clube de Campo Demo", addr="secretaria@clube.example.com", subject=subject,
            when="Sat, 21 Nov 2026 16:05:00 -0300", msgid="two-boletos.20261121@clube.example.com")
    m.set_content("Prezada associada,\n\nSeguem dois boletos: a mensalidade social de março/2027 e a "
                  "reserva do salão de festas para 30/06/2027. O demonstrativo vai em CSV.\n\n"
                  "Secretaria do Clube\n", charset="utf-8", cte="quoted-printable")
    m.add_attachment("item;valor\r\nMensalidade social 03/2027;99,99\r\nReserva do salão;1050,00\r\n",
                     subtype="csv", charset="utf-8", filename="demonstrativo.csv")
    pdf_part(m, B["b07"], "mensalidade-marco-2027.pdf")
    pdf_part(m, B["b08"], "reserva-salao.pdf")
    corpus.write("two-boletos", m, from_addr="secretaria@clube.example.com", subject=subject,
                 msgid="two-boletos.20261121@clube.example.com",
                 bills=[corpus.bill("b07", "attachment:1", in_body=False),
                        corpus.bill("b08", "attachment:2", in_body=False)])

    # 7. RFC 2047 Subject (UTF-8, B) and From display name (ISO-8859-1, B), built
    #    with the compat32 API; Bradesco boleto whose Pix amount differs; no line in body.
    m = MIMEMultipart("mixed")
    utf8_b = Charset("utf-8")
    utf8_b.header_encoding = BASE64
    latin_b = Charset("iso-8859-1")
    latin_b.header_encoding = BASE64
    subject = "Cobrança: mensalidade escolar de fevereiro/2027 — Colégio São João (desconto no Pix)"
    display = "Tesouraria do Colégio São João"
    headers(m, name=Header(display, latin_b).encode(), addr="tesouraria@colegio.example.com",
            subject=Header(subject, utf8_b), when="Sat, 21 Nov 2026 07:45:00 -0300",
            msgid="rfc2047.20261121@colegio.example.com", legacy=True)
    m.attach(MIMEText("Senhores pais e responsáveis,\n\nSegue o boleto da mensalidade de fevereiro/2027. "
                      "Pagando pelo Pix impresso no boleto até o vencimento, o valor tem desconto.\n\n"
                      "Tesouraria\n", "plain", "utf-8"))
    part = MIMEApplication(B["b05"]["pdf"], "pdf")
    part.add_header("Content-Disposition", "attachment", filename="mensalidade-fev-2027.pdf")
    m.attach(part)
    bill = corpus.bill("b05", "attachment:0", in_body=False)
    corpus.write("rfc2047", m, from_addr="tesouraria@colegio.example.com", subject=subject,
                 msgid="rfc2047.20261121@colegio.example.com", bills=[bill],
                 from_display_name=display, amounts_disagree=True)

    # 8. the bill only in the body: no attachment at all (Caixa).
    b = B["b09"]["record"]
    m = new_message()
    subject = "Gás Encanado: sua conta de novembro"
    headers(m, name="Gás Encanado", addr="contas@gas.example.com", subject=subject,
            when="Sat, 14 Nov 2026 10:00:00 -0300", msgid="body-only.20261114@gas.example.com")
    m.set_content(f"Conta de gás de novembro/2026\nValor: R$ {b['amount_printed']}\nVencimento: 28/12/2026\n"
                  f"Linha digitável:\n{b['digitable_line']}\n", charset="utf-8", cte="quoted-printable")
    corpus.write("body-only", m, from_addr="contas@gas.example.com", subject=subject,
                 msgid="body-only.20261114@gas.example.com",
                 bills=[corpus.bill("b09", "body", in_body="formatted")])

    # 9. hostile PDFs, each alone in its message with no boleto in the body.
    notes = {
        "scan": ("Boleto digitalizado", "Segue o boleto digitalizado (scanner do escritório)."),
        "encrypted": ("Boleto protegido por senha", "O PDF está protegido: a senha são os 4 primeiros "
                      "dígitos do seu CPF."),
        "broken": ("Boleto", "Segue o boleto."),
        "bomb": ("Boleto em anexo", "Segue o boleto em anexo."),
        "many-pages": ("Demonstrativo anual com boleto", "Segue o demonstrativo completo com o boleto."),
    }
    for i, (name, item) in enumerate(hostile.items()):
        title, text = notes[name]
        msgid = f"{name}.20261122@hostil.example.com"
        m = new_message()
        headers(m, name="Cobranças Diversas Demo", addr="cobranca@hostil.example.com", subject=title,
                when=f"Sun, 22 Nov 2026 09:{i:02d}:00 -0300", msgid=msgid)
        m.set_content(text + "\n", charset="utf-8", cte="quoted-printable")
        m.add_attachment(item["pdf"], maintype="application", subtype="pdf", filename=f"{name}.pdf")
        extra = {k: v for k, v in item.items() if k != "pdf"}
        corpus.write(name, m, from_addr="cobranca@hostil.example.com", subject=title, msgid=msgid,
                     bills=[], pdf=f"pdf/{name}.pdf", attachment_source="attachment:0", **extra)


# --------------------------------------------------------------------------
# Hostile PDFs
# --------------------------------------------------------------------------


def pdf_from_objects(objects: list[bytes], root: int, file_id: bytes, version=b"1.4") -> bytes:
    """Serialises numbered objects (1..n) with a classic xref table."""
    out = bytearray(b"%PDF-" + version + b"\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for num, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    hex_id = file_id.hex().encode()
    out += (b"trailer\n<< /Size %d /Root %d 0 R /ID [<%s> <%s>] >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, root, hex_id, hex_id, xref))
    return bytes(out)


def make_bomb() -> tuple[bytes, int]:
    head = b"BT /F1 12 Tf 72 770 Td (Fatura) Tj ET\n"
    total = 1 << 30  # the content stream inflates to exactly 1 GiB
    comp = zlib.compressobj(9)
    parts = [comp.compress(head)]
    chunk = b" " * (1 << 20)
    left = total - len(head)
    while left:
        n = min(left, len(chunk))
        parts.append(comp.compress(chunk[:n]))
        left -= n
    parts.append(comp.flush())
    data = b"".join(parts)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595.28 841.89] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    return pdf_from_objects(objects, 1, hashlib.md5(b"bomb").digest()), total


def make_many_pages(n: int = 10_000) -> bytes:
    first_page = 4
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(n))
    content = b"0.9 g 28 28 m 567 28 l S\n"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count %d /MediaBox [0 0 595.28 841.89] /Resources << >> /Kids [%s] >>" % (n, kids),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
    ]
    objects += [b"<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>"] * n
    return pdf_from_objects(objects, 1, hashlib.md5(b"many-pages").digest())


def make_scan(pdf: bytes) -> bytes:
    doc = pypdfium2.PdfDocument(pdf)
    page = doc[0]
    image = page.render(scale=110 / 72, grayscale=True).to_pil().convert("L")
    page.close()
    doc.close()
    jpeg = io.BytesIO()
    image.save(jpeg, "JPEG", quality=70, optimize=False)
    jpeg.seek(0)
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=A4)
    canvas.drawImage(ImageReader(jpeg), 0, 0, width=A4[0], height=A4[1])
    canvas.showPage()
    canvas.save()
    return buf.getvalue()


def make_encrypted(pdf: bytes, password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    fixed = ByteStringObject(hashlib.md5(b"encrypted").digest())

    def pinned_identifiers():  # pypdf would draw a random second identifier
        writer._ID = ArrayObject((fixed, fixed))

    writer.generate_file_identifiers = pinned_identifiers
    writer.encrypt(user_password=password, owner_password="owner-" + password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_broken(pdf: bytes) -> tuple[bytes, int]:
    """The real boleto cut in the middle of its page dictionary (before the
    catalog, the page tree and the content stream), then noise, no xref."""
    cut = pdf.index(b"/Type /Page\n") + 5
    return pdf[:cut] + garbage(4096, b"broken"), cut


def make_hostile(boletos: dict) -> dict:
    inner = lambda key: dict(boletos[key]["record"], bill_id=key)  # noqa: E731
    bomb, inflated = make_bomb()
    broken, cut = make_broken(boletos["b04"]["pdf"])
    return {
        "scan": {"pdf": make_scan(boletos["b10"]["pdf"]), "reason": "pdf_no_text",
                 "image_only": True, "inner_bill": inner("b10"),
                 "note": "one JPEG image per page (110 dpi grayscale render by pypdfium2); no text layer"},
        "encrypted": {"pdf": make_encrypted(boletos["b11"]["pdf"], "5299"), "reason": "pdf_encrypted",
                      "password": "5299", "encryption": "pypdf RC4-128 (standard security handler R3), user password",
                      "inner_bill": inner("b11")},
        "broken": {"pdf": broken, "reason": "pdf_unreadable", "truncated_at": cut,
                   "note": "b04's PDF cut inside the page dictionary, then 4096 bytes of noise; no catalog, "
                           "page tree, content stream, xref or trailer"},
        "bomb": {"pdf": bomb, "reason": "pdf_unreadable", "inflated_bytes": inflated,
                 "note": "single FlateDecode content stream: 38 bytes of text operators then spaces"},
        "many-pages": {"pdf": make_many_pages(), "reason": "pdf_unreadable", "pages": 10_000,
                       "note": "10,000 pages sharing one content stream object (one grey line)"},
    }


# --------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------


def text_with(tool: str, pdf: bytes) -> str | None:
    if tool == "pypdf":
        return "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    if shutil.which("pdftotext") is None:
        return None
    done = subprocess.run(["pdftotext", "-q", "-", "-"], input=pdf, capture_output=True, check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""


def verify(corpus: Corpus, hostile: dict) -> list[str]:
    report = []
    for name, expect in corpus.checks:
        raw = corpus.files[f"{name}.eml"]
        atts = attachments_of(raw)
        msg = BytesParser(policy=policy.default).parsebytes(raw)
        assert str(msg["Subject"]) == expect["subject"], (name, str(msg["Subject"]))
        assert msg["Message-ID"] == f"<{expect['message_id']}>"
        assert msg["From"].addresses[0].addr_spec == expect["from"]
        body = "\n".join(p.get_content() for p in msg.walk()
                         if p.get_content_maintype() == "text" and p.get_content_disposition() != "attachment")
        for bill in expect["bills"]:
            digits = "".join(c for c in bill["digitable_line"] if c.isdigit())
            in_body = {"formatted": bill["digitable_line"] in body, "digits": digits in body}
            if bill["in_body"]:
                assert in_body[bill["in_body"]], (name, bill["bill_id"])
            else:
                assert not in_body["formatted"] and digits not in "".join(c for c in body if c.isdigit()), name
            if bill["pix"] and bill["pix"]["in"] == "body":
                assert bill["pix"]["payload"] in body, name
            if bill["source"] == "body":
                continue
            idx = int(bill["source"].split(":")[1])
            data = atts[idx].get_content()
            assert data == corpus.boletos[bill["bill_id"]]["pdf"], (name, idx)
            for tool in ("pypdf", "pdftotext"):
                text = text_with(tool, data)
                if text is None:
                    continue
                assert bill["digitable_line"] in text, (name, tool)
                if bill["pix"] and bill["pix"]["in"] == "pdf":
                    assert bill["pix"]["payload"] in text, (name, tool, "pix")
                    report.append(f"{name}: Pix payload found on one line by {tool}")
            report.append(f"{name}: {bill['bill_id']} line found verbatim (dots and spaces) in PDF text")
        if name in hostile:
            data = atts[0].get_content()
            assert data == hostile[name]["pdf"]
            report.append(f"{name}: {verify_hostile(name, data, hostile[name])}")
    return report


def verify_hostile(name: str, data: bytes, item: dict) -> str:
    if name == "scan":
        reader = pypdf.PdfReader(io.BytesIO(data))
        assert len(reader.pages) == 1 and not (reader.pages[0].extract_text() or "").strip()
        assert not (text_with("pdftotext", data) or "").strip()
        return "1 page, no text (pypdf, pdftotext)"
    if name == "encrypted":
        reader = pypdf.PdfReader(io.BytesIO(data))
        assert reader.is_encrypted
        assert reader.decrypt(item["password"]) != 0
        assert item["inner_bill"]["digitable_line"] in reader.pages[0].extract_text()
        return "encrypted; opens with the password and then yields the line"
    if name == "broken":
        try:
            reader = pypdf.PdfReader(io.BytesIO(data))
            pages = len(reader.pages)
            text = "".join(p.extract_text() or "" for p in reader.pages)
        except Exception as error:  # noqa: BLE001
            return f"pypdf refuses it ({type(error).__name__})"
        assert pages == 0 or not text.strip(), "broken PDF still readable"
        return f"pypdf: {pages} page(s), no text"
    if name == "bomb":
        start = data.index(b"stream\n") + len(b"stream\n")
        length = int(data[data.rindex(b"/Length ", 0, start) + 8:].split(b" ")[0])
        d = zlib.decompressobj()
        total, rest = 0, data[start:start + length]
        while rest:
            total += len(d.decompress(rest, 1 << 24))
            rest = d.unconsumed_tail
        total += len(d.flush())
        assert total == item["inflated_bytes"] and d.eof
        return f"compressed {length} bytes -> {total} bytes inflated (checked in 16 MiB steps)"
    if name == "many-pages":
        reader = pypdf.PdfReader(io.BytesIO(data))
        assert len(reader.pages) == item["pages"]
        return f"pypdf counts {len(reader.pages)} pages"
    raise AssertionError(name)


# --------------------------------------------------------------------------


def main():
    pix = make_pix()
    boletos = make_boletos(pix)
    problems = run_oracle(boletos)
    hostile = make_hostile(boletos)
    corpus = Corpus(boletos)
    build_messages(corpus, hostile)
    report = verify(corpus, hostile)

    # Write: standalone PDFs (the ones attached somewhere, plus the hostile ones).
    attached = {b["pdf"] for _, e in corpus.checks for b in e["bills"] if b["pdf"]}
    if PDF_DIR.exists():
        shutil.rmtree(PDF_DIR)
    PDF_DIR.mkdir()
    for key, b in boletos.items():
        if f"pdf/{b['name']}" in attached:
            (PDF_DIR / b["name"]).write_bytes(b["pdf"])
    for name, item in hostile.items():
        (PDF_DIR / f"{name}.pdf").write_bytes(item["pdf"])
    for old in list(HERE.glob("*.eml")) + [p for p in HERE.glob("*.json")
                                           if p.name not in ("package.json", "package-lock.json")]:
        old.unlink()
    for name, data in corpus.files.items():
        (HERE / name).write_bytes(data)

    for line in report:
        print(line)
    for key, b in boletos.items():
        r = b["record"]
        o = r["oracle"]
        print(f"{key} {r['bank_code']} {r['digitable_line']} {r['amount_cents']:>8} {r['due_date']}"
              f"  oracle: valid={o['valid']} agrees={o['agrees_with_generator']}")
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    print(f"tests/bills total: {total} bytes")
    if problems:
        print("ORACLE DISAGREES WITH THE GENERATOR:")
        for p in problems:
            print("  " + p)


if __name__ == "__main__":
    main()
