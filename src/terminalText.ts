// Text from handlers, enqueuers and command lines shown on an operator's
// terminal. A job's error message, type or payload, or an argument, can
// hold a control character (ESC starts a terminal's escape sequence: it
// can set the window title, clear the screen, recolour what follows; CR
// writes over the line) or a bidirectional override (which reverses how a
// line reads). Such characters are shown escaped, `\u001b`, never written.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same but line feeds and tabs, which a multi-line log entry (a stack) keeps. */
const UNSAFE_IN_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escaped = (ch: string) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with its control and bidirectional formatting characters written as `\uXXXX`: one line, whatever it held. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** `text` with the same characters escaped but line feeds and tabs: what a terminal prints as it reads. */
export function terminalLines(text: string): string {
  return text.replace(UNSAFE_IN_LINES, escaped);
}
