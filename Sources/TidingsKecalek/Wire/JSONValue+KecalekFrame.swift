import Foundation
import TidingsCore

extension JSONValue {
    /// Parses one Kecalek frame's JSON text, failing the way every Kecalek decoder does.
    ///
    /// - Throws: ``KecalekError/malformedFrame`` when `data` is not JSON (the error names only the
    ///   size: a frame may carry secrets).
    init(kecalekFrame data: Data) throws(KecalekError) {
        do {
            self = try JSONValue(parsing: data)
        } catch {
            throw KecalekError.malformedFrame("not JSON (\(data.count) bytes)")
        }
    }

    /// The compact JSON text of a Kecalek frame, with sorted keys so equal frames encode equally.
    var kecalekFrame: Data { jsonData(sortedKeys: true) }
}
