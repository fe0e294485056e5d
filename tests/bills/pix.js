// Builds the Pix "copia e cola" codes (static EMV BR Codes) of the corpus with
// pix-utils, an independent public Pix library, and parses each one back with
// the same library. Reads a JSON array [{id, merchantName, merchantCity,
// pixKey, amount, txid}] on stdin (amount is a decimal string such as
// "1599.90"), writes one JSON array on stdout. Run by make.py.
'use strict';
const { createStaticPix, parsePix, hasError } = require('pix-utils');
const version = require('pix-utils/package.json').version;

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.map((spec) => {
  const pix = createStaticPix({
    merchantName: spec.merchantName,
    merchantCity: spec.merchantCity,
    pixKey: spec.pixKey,
    txid: spec.txid,
    transactionAmount: Number(spec.amount),
  });
  if (hasError(pix)) throw new Error(`pix-utils refused ${spec.id}: ${JSON.stringify(pix)}`);
  const payload = pix.toBRCode();
  const parsed = parsePix(payload);
  if (hasError(parsed)) throw new Error(`pix-utils cannot parse its own ${spec.id}`);
  return {
    id: spec.id,
    library: `pix-utils@${version}`,
    payload,
    merchant_name: parsed.merchantName,
    merchant_city: parsed.merchantCity,
    key: parsed.pixKey,
    amount: parsed.transactionAmount,
    txid: parsed.txid,
  };
});
process.stdout.write(JSON.stringify(out));
