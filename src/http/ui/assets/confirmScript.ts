// Asks before an action that cannot be undone (a job's cancel, which takes
// its unfinished children with it; an outbox event's discard): a form with
// data-confirm submits only once the browser's confirm() says yes. Without
// the script the form posts as before: the question is a guard against a
// stray click, not a check the server relies on. Plain browser JavaScript
// kept as text: no backtick, no dollar-brace.
export const CONFIRM_SCRIPT = String.raw`
function confirmDanger() {
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var question = form && form.getAttribute && form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) e.preventDefault();
  });
}
`;
