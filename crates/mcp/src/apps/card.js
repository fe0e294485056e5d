// The boleto card: what the server decoded from one e-mail (emails_get),
// drawn from the tool's result. Subject and body are not shown: the card
// is made of server facts only.
const BANKS = { '001': 'Banco do Brasil', '033': 'Santander', '041': 'Banrisul', '077': 'Inter', '104': 'Caixa',
  '208': 'BTG Pactual', '212': 'Banco Original', '237': 'Bradesco', '260': 'Nu Pagamentos', '290': 'PagSeguro',
  '336': 'C6 Bank', '341': 'Itaú', '422': 'Safra', '748': 'Sicredi', '756': 'Sicoob' };
const brl = (cents) => (typeof cents === 'number')
  ? 'R$ ' + Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.') + ',' + String(cents % 100).padStart(2, '0')
  : 'amount to be filled in';
const date = (iso) => (typeof iso === 'string' && /^\d{4}-\d{2}-\d{2}/.test(iso)) ? iso.slice(8, 10) + '/' + iso.slice(5, 7) + '/' + iso.slice(0, 4) : '—';
// The digitable line as printed on a boleto: 5.5 5.6 5.6 1 14 (bank slips), or in four blocks of 12 (utility slips).
const line = (digits) => {
  if (typeof digits !== 'string') return '';
  if (digits.length === 47) {
    return digits.slice(0, 5) + '.' + digits.slice(5, 10) + ' ' + digits.slice(10, 15) + '.' + digits.slice(15, 21) + ' ' +
      digits.slice(21, 26) + '.' + digits.slice(26, 32) + ' ' + digits.slice(32, 33) + ' ' + digits.slice(33);
  }
  return digits.match(/.{1,12}/g).join(' ');
};
const copyButton = (text, label) => {
  const button = view.el('button', 'copy', label);
  button.type = 'button';
  button.addEventListener('click', () => {
    const done = () => { button.textContent = 'Copied'; };
    const fallback = () => {
      const field = view.el('textarea');
      field.value = text;
      document.body.appendChild(field);
      field.select();
      const copied = document.execCommand && document.execCommand('copy');
      field.remove();
      button.textContent = copied ? 'Copied' : 'Select and copy';
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, fallback); else fallback();
  });
  return button;
};
const row = (label, value, className) => {
  const node = view.el('div', 'row');
  node.appendChild(view.el('span', 'label', label));
  node.appendChild(view.el('span', className || '', value));
  return node;
};
const TRUST = { verified: 'verified sender', unverified: 'unverified sender', failed: 'sender failed authentication' };
const STATUS = { received: 'received', processing: 'processing', processed: 'processed', failed: 'failed', rejected: 'rejected' };
const render = (result) => {
  const main = document.getElementById('card');
  main.replaceChildren();
  const email = result && result.structuredContent && result.structuredContent.data;
  if (!email || result.isError) {
    main.appendChild(view.el('p', 'muted', 'Nothing to show: the e-mail could not be read.'));
    view.size();
    return;
  }
  const head = view.el('div', 'row');
  head.appendChild(view.el('h1', '', 'Boleto'));
  head.appendChild(view.el('span', 'badge ' + email.status, STATUS[email.status] || email.status));
  head.appendChild(view.el('span', 'badge ' + email.trust, TRUST[email.trust] || email.trust));
  main.appendChild(head);
  main.appendChild(row('Received', date(email.received_at)));
  main.appendChild(row('E-mail', email.id, 'code'));
  const bills = Array.isArray(email.bills) && email.bills.length ? email.bills : (email.extracted ? [email.extracted] : []);
  if (!bills.length) {
    main.appendChild(view.el('p', 'muted', email.status === 'processed' ? 'No boleto or Pix code was found.' : 'No bill decoded yet.'));
  }
  for (const bill of bills) {
    const box = view.el('section', 'bill');
    box.appendChild(view.el('div', 'amount', brl(bill.amount_cents)));
    if (bill.due_date) box.appendChild(row('Due', date(bill.due_date)));
    if (bill.bank_code) box.appendChild(row('Bank', bill.bank_code + (BANKS[bill.bank_code] ? ' · ' + BANKS[bill.bank_code] : '')));
    if (bill.digitable_line) {
      const digits = view.el('div', 'row');
      digits.appendChild(view.el('span', 'code line', line(bill.digitable_line)));
      digits.appendChild(copyButton(bill.digitable_line, 'Copy line'));
      box.appendChild(digits);
    }
    if (bill.pix && bill.pix.payload) {
      if (bill.pix.merchant_name) box.appendChild(row('Pix to', bill.pix.merchant_name));
      const pix = view.el('div', 'row');
      pix.appendChild(view.el('span', 'code pix', bill.pix.payload));
      pix.appendChild(copyButton(bill.pix.payload, 'Copy Pix code'));
      box.appendChild(pix);
      if (bill.amounts_disagree) box.appendChild(view.el('p', 'failed', 'The Pix code charges another amount than the boleto.'));
    }
    box.appendChild(row('Found in', bill.source === 'body' ? 'the e-mail body' : 'a PDF attachment'));
    main.appendChild(box);
  }
  view.size();
};
view.on('ui/notifications/tool-result', render);
view.on('ui/notifications/tool-cancelled', () => {
  document.getElementById('card').replaceChildren(view.el('p', 'muted', 'Cancelled.'));
});
view.start('kobana-boleto-card');
