// Second, independent oracle for the corpus: @mrmgomes/boleto-utils decodes and
// checks every digitable line and barcode that make.py produced with another
// library; @brazilian-utils/brazilian-utils gives a third opinion on each line
// (it checks the barcode's general check digit through the line, which
// boleto-utils' line check does not). Reads a JSON array [{id, line, barcode}]
// on stdin and writes one JSON array of verdicts on stdout. Run by make.py
// with TZ=UTC; node_modules come from NODE_PATH.
'use strict';
const utils = require('@mrmgomes/boleto-utils');
const version = require('@mrmgomes/boleto-utils/package.json').version;
const bu = require('@brazilian-utils/brazilian-utils');
const buVersion = require('@brazilian-utils/brazilian-utils/package.json').version;
// Fixed reference date, so the 9000-day due-date factor cycle resolves the same way every run.
const REFERENCE = new Date(Date.UTC(2026, 10, 22));

function day(d) {
  // The library anchors its dates at 20:54:59 UTC; the calendar day is the UTC one.
  return d instanceof Date && !isNaN(d) ? d.toISOString().slice(0, 10) : null;
}

function verdict(code) {
  const r = utils.validarBoleto(code);
  const out = { valid: r.sucesso === true, message: r.mensagem };
  if (r.sucesso) {
    out.input_kind = r.tipoCodigoInput;
    out.boleto_kind = r.tipoBoleto;
    out.barcode = r.codigoBarras;
    out.line_digits = r.linhaDigitavel;
    out.amount = r.valor;
    out.due_date_new_factor = day(r.vencimentoComNovoFator2025);
    out.due_date_old_factor = day(r.vencimento);
  }
  return out;
}

function third(line) {
  const info = bu.getBoletoInfo(line, { referenceDate: REFERENCE });
  return {
    library: `@brazilian-utils/brazilian-utils@${buVersion}`,
    line_valid: bu.isValidBoleto(line),
    line_digits: bu.parseBoleto(line),
    amount_cents: info ? info.amount : null,
    due_date: info ? day(info.expirationDate) : null,
    bank_code: info ? info.bankCode : null,
    reference_date: day(REFERENCE),
  };
}

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map(({ id, line, barcode }) => ({
  id,
  library: `@mrmgomes/boleto-utils@${version}`,
  line: verdict(line),
  barcode: verdict(barcode),
  line_formatted_from_barcode: utils.codBarras2LinhaDigitavel(barcode, true),
  third_opinion: third(line),
}));
process.stdout.write(JSON.stringify(out));
