import Foundation

/// `--json` output: one JSON object per line on standard output, keys sorted so that lines are stable.
enum JSONLines {
    /// Writes `object` as one line. Values are strings, numbers, booleans, arrays, nested objects or `NSNull`.
    static func emit(_ object: [String: Any]) {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            writeStandardError("Error: a JSON line could not be encoded.\n")
            return
        }
        Console.current.writeOutput(String(decoding: data, as: UTF8.self) + "\n")
    }

    /// The error object for one problem: `{"type":"error","kind":…,"code":…,"message":…[,"conversation":…]}`.
    static func error(code: Int32, message: String, conversation: String? = nil) {
        var object: [String: Any] = [
            "type": "error", "kind": ExitCode.kind(code), "code": Int(code), "message": message,
        ]
        if let conversation { object["conversation"] = conversation }
        emit(object)
    }
}
