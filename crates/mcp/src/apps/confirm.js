// The confirmation view of a destructive tool: what will happen, to what,
// in which workspace, and the record as the server knows it; the person
// approves or declines here. Approving calls confirmation_approve (a tool
// only views may call) with the sealed token the result carried in its
// _meta; declining calls confirmation_decline, so the token can never be
// approved afterwards; either way the model is told what the person chose.
const TOKEN = 'br.com.kobana/confirmation';
const render = (result) => {
  const main = document.getElementById('confirm');
  main.replaceChildren();
  const data = result && result.structuredContent;
  const asked = data && data.confirmation;
  const token = result && result._meta && result._meta[TOKEN] && result._meta[TOKEN].token;
  if (!asked || !token) {
    // Nothing to confirm (the call ran at once, or failed): say what came back.
    const text = result && Array.isArray(result.content) && result.content[0] && result.content[0].text;
    main.appendChild(view.el('p', result && result.isError ? 'failed' : 'muted', text || 'Nothing to confirm.'));
    view.size();
    return;
  }
  main.appendChild(view.el('h1', '', asked.title));
  for (const [name, value] of Object.entries(asked.target || {})) {
    const row = view.el('div', 'row');
    row.appendChild(view.el('span', 'label', name));
    row.appendChild(view.el('span', 'code', typeof value === 'string' ? value : JSON.stringify(value)));
    main.appendChild(row);
  }
  for (const [name, value] of Object.entries(asked.arguments || {})) {
    const row = view.el('div', 'row');
    row.appendChild(view.el('span', 'label', name));
    row.appendChild(view.el('span', 'code', value));
    main.appendChild(row);
  }
  const where = view.el('div', 'row');
  where.appendChild(view.el('span', 'label', 'workspace'));
  where.appendChild(view.el('span', 'code', asked.workspace));
  main.appendChild(where);
  main.appendChild(view.el('p', '', asked.effect));
  if (asked.facts) main.appendChild(view.el('p', 'muted', asked.facts));
  const actions = view.el('div', 'actions');
  const approve = view.el('button', 'primary', 'Approve');
  const decline = view.el('button', '', 'Decline');
  approve.id = 'approve';
  decline.id = 'decline';
  approve.type = decline.type = 'button';
  actions.append(approve, decline);
  main.appendChild(actions);
  const outcome = view.el('p', 'outcome');
  outcome.id = 'outcome';
  main.appendChild(outcome);
  const decide = (tool, said) => {
    approve.disabled = decline.disabled = true;
    view.request('tools/call', { name: tool, arguments: { token } }).then((answer) => {
      const text = (answer && Array.isArray(answer.content) && answer.content[0] && answer.content[0].text) || '';
      const failed = Boolean(answer && answer.isError);
      outcome.className = 'outcome ' + (failed ? 'failed' : 'succeeded');
      outcome.textContent = failed ? 'Not done: ' + text : said;
      // The model learns what the person chose (a host without this request just says no).
      view.request('ui/update-model-context', {
        content: [{ type: 'text', text: asked.title + ': ' + (failed ? 'not done. ' + text : said) }],
      }).catch(() => {});
    }, (error) => {
      outcome.className = 'outcome failed';
      outcome.textContent = 'Could not answer: ' + ((error && error.message) || 'error');
    }).then(view.size);
  };
  approve.addEventListener('click', () => decide('confirmation_approve', 'Approved: done.'));
  decline.addEventListener('click', () => decide('confirmation_decline', 'Declined: nothing was done.'));
  view.size();
};
view.on('ui/notifications/tool-result', render);
view.on('ui/notifications/tool-cancelled', () => {
  document.getElementById('confirm').replaceChildren(view.el('p', 'muted', 'Cancelled.'));
});
view.start('kobana-confirmation');
