/** What an HTTP header value may hold here: visible ASCII and spaces, no line breaks. */
export const HEADER_TEXT = /^[\x20-\x7e]+$/;

/** An HTTP token (RFC 9110, section 5.6.2): what header and cookie names are made of. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
