import Testing

@testable import tidings

/// The terminal's line editor on its own: characters at the cursor, whole UTF-8 characters, history.
@Suite(.timeLimit(.minutes(1))) struct LineEditorTests {
    static func typed(_ text: String, into editor: inout LineEditor) {
        for byte in text.utf8 { editor.type(byte) }
    }

    @Test func theCursorMovesOverWholeCharacters() {
        var editor = LineEditor()
        Self.typed("grüß", into: &editor)
        #expect(editor.text == "grüß")
        editor.left()
        editor.left()
        Self.typed("X", into: &editor)
        #expect(editor.text == "grXüß")
        #expect(editor.columnsAfterCursor == 2)
        editor.backspace()
        editor.delete()
        #expect(editor.text == "grß")
        editor.home()
        editor.left()  // stays at the start
        editor.delete()
        editor.end()
        editor.right()  // stays at the end
        editor.delete()  // nothing under the cursor
        #expect(editor.text == "rß")
        #expect(editor.columnsAfterCursor == 0)
    }

    @Test func aStrayOrUnfinishedByteNeverBreaksTheLine() {
        var editor = LineEditor()
        editor.type(0x80)  // a continuation byte without a lead
        editor.type(0xC3)  // a lead whose sequence a new lead cuts off
        Self.typed("a", into: &editor)
        #expect(editor.text == "a")
        #expect(editor.take(remember: true) == "a")
        #expect(editor.isEmpty)
    }

    @Test func upAndDownWalkTheHistoryAndKeepTheDraft() {
        var editor = LineEditor(historyLimit: 2)
        for line in ["eins", "zwei", "zwei", "drei"] {
            Self.typed(line, into: &editor)
            _ = editor.take(remember: true)
        }
        #expect(editor.history == ["zwei", "drei"])  // a repeat is kept once; the limit drops the oldest
        Self.typed("entwurf", into: &editor)
        editor.previous()
        #expect(editor.text == "drei")
        editor.previous()
        editor.previous()  // stays at the oldest
        #expect(editor.text == "zwei")
        editor.next()
        editor.next()
        #expect(editor.text == "entwurf")
        Self.typed("geheim", into: &editor)
        _ = editor.take(remember: false)  // a password
        #expect(editor.history == ["zwei", "drei"])
    }
}
