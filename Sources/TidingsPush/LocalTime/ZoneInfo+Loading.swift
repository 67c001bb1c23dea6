import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Android)
    import Android
#endif

extension ZoneInfo {
    /// Where tzdata installs the TZif files on Linux and macOS.
    public static let systemDirectory = "/usr/share/zoneinfo"
    /// The largest zone file read (the largest in tzdata is under 4 KB; a fat one under 100 KB).
    public static let maximumFileSize = 1 << 20

    /// The zone named `identifier` (`Europe/Berlin`), read from `directory`.
    ///
    /// - Throws: ``ZoneInfoError/invalidIdentifier`` for a name that could leave `directory`; ``ZoneInfoError``
    ///   when the file cannot be read or is not a well-formed TZif file.
    public static func named(_ identifier: String, directory: String = systemDirectory) throws(ZoneInfoError)
        -> ZoneInfo
    {
        guard isValidIdentifier(identifier) else { throw .invalidIdentifier }
        return try ZoneInfo(identifier: identifier, tzif: readFile(directory + "/" + identifier))
    }

    /// The device's zone as the C library reads it, without ICU: `TZ` when set (`:Europe/Berlin`, a file path, a
    /// POSIX TZ string, or empty for UTC), otherwise `/etc/localtime` (its identifier taken from the link's target
    /// under `zoneinfo/`), otherwise UTC.
    ///
    /// - Throws: ``ZoneInfoError`` when the zone it names cannot be read; the caller may fall back to Foundation.
    public static func current(
        tz: String? = getenv("TZ").map { String(cString: $0) }, localtime: String = "/etc/localtime",
        directory: String = systemDirectory
    ) throws(ZoneInfoError) -> ZoneInfo {
        guard var tz else {
            guard access(localtime, F_OK) == 0 else { return .utc }
            return try ZoneInfo(identifier: linkedIdentifier(localtime) ?? "localtime", tzif: readFile(localtime))
        }
        if tz.hasPrefix(":") { tz.removeFirst() }
        if tz.isEmpty { return .utc }
        if tz.hasPrefix("/") { return try ZoneInfo(identifier: zoneName(inPath: tz) ?? tz, tzif: readFile(tz)) }
        if isValidIdentifier(tz), access(directory + "/" + tz, F_OK) == 0 { return try named(tz, directory: directory) }
        return try ZoneInfo(posixTZ: tz)
    }

    /// Whether `identifier` names a file inside a zone directory: 1–255 bytes of letters, digits, `._+-`, in
    /// `/`-separated parts none of which is empty, `.` or `..`.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        let bytes = Array(identifier.utf8)
        guard (1...255).contains(bytes.count) else { return false }
        let allowed = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-")
        }
        let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && !part.elementsEqual([0x2E]) && !part.elementsEqual([0x2E, 0x2E])
                && part.allSatisfy(allowed)
        }
    }

    /// The zone name a path under a `zoneinfo/` directory stands for (`/usr/share/zoneinfo/Europe/Berlin` →
    /// `Europe/Berlin`).
    static func zoneName(inPath path: String) -> String? {
        let bytes = Array(path.utf8)
        let marker = Array("zoneinfo/".utf8)
        guard bytes.count > marker.count,
            let start = (0...(bytes.count - marker.count)).last(where: {
                bytes[$0..<$0 + marker.count].elementsEqual(marker)
            })
        else { return nil }
        let name = String(decoding: bytes[(start + marker.count)...], as: UTF8.self)
        return isValidIdentifier(name) ? name : nil
    }

    private static func linkedIdentifier(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return zoneName(inPath: String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The file's bytes, at most ``maximumFileSize``; plain POSIX reads, so nothing here loads Foundation's
    /// file or URL machinery.
    static func readFile(_ path: String) throws(ZoneInfoError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumFileSize else { throw .tooLarge }
        }
    }
}
