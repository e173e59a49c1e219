const when = new Date(Date.UTC(2026, 0, 15, 9, 30));
document.getElementById('stamp').textContent = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'full',
  timeStyle: 'short',
}).format(when);
document
  .getElementById('more')
  .addEventListener('click', () => document.getElementById('details').classList.add('open'));
