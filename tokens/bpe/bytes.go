package bpe

// byteAlphabet is GPT-2's map from bytes to printable runes: the printable bytes of Latin-1
// stand for themselves, the other 68 bytes for U+0100 onwards in byte order. Byte-level
// vocabularies spell every token in this alphabet, so that no token holds whitespace or control
// characters.
func byteAlphabet() (toRune [256]rune, toByte map[rune]byte) {
	printable := func(b int) bool {
		return ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
	}
	toByte = make(map[rune]byte, 256)
	next := rune(256)
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !printable(b) {
			r = next
			next++
		}
		toRune[b] = r
		toByte[r] = byte(b)
	}
	return toRune, toByte
}
