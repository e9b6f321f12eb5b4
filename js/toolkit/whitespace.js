// The one visible-whitespace mapping: how every view (and the explorer's plain-text labels, in
// Python: logprob_viz/views/whitespace.py, checked equal by a test) marks a space, a tab, a
// newline, a carriage return and an empty token. Token text stays data: marks replace characters
// in strings that are then inserted as text.

/** The mark shown for each whitespace character. */
export const WHITESPACE_MARKS = {
  " ": "\u00b7", // ·
  "\u00a0": "\u00b7", // a no-break space reads as a space
  "\t": "\u2192", // →
  "\n": "\u21b5", // ↵
  "\r": "\u240d", // ␍
};

/** What an empty token (no characters at all) shows. */
export const EMPTY_MARK = "\u2205"; // ∅

const MARKED = new RegExp(`[${Object.keys(WHITESPACE_MARKS).join("")}]`, "g");

/** `text` with each whitespace character replaced by its mark; an empty text as EMPTY_MARK. */
export function visible(text) {
  if (text === "") return EMPTY_MARK;
  return text.replace(MARKED, (ch) => WHITESPACE_MARKS[ch]);
}

/** True when a token is only whitespace (or empty): a list draws its extent instead of nothing. */
export const isBlank = (text) => text.trim() === "";
