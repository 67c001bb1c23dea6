// Stand-ins for the names an app gets from CryptoKit, `os` and GRDB, declared in a module of their own so that
// NameCollisionTests sees them exactly as an app sees those frameworks: if a Tidings library exported one of
// these names too, every unqualified use in NameCollisionTests would be ambiguous and the tests would not compile.
// Where the real framework exists (CryptoKit and `os` on Apple platforms) the test imports it instead.

/// Where a stand-in comes from; the tests read it to show which declaration an unqualified name resolved to.
public protocol StandIn {}

extension StandIn {
    /// The module that declared the stand-in.
    public static var origin: String { "NameCollisionStandIns" }
}

#if !canImport(CryptoKit)
    /// CryptoKit's symmetric key.
    public struct SymmetricKey: StandIn {}
    /// CryptoKit's SHA-256.
    public enum SHA256: StandIn {}
    /// CryptoKit's SHA-384.
    public enum SHA384: StandIn {}
    /// CryptoKit's SHA-512.
    public enum SHA512: StandIn {}
    /// CryptoKit's P-256.
    public enum P256: StandIn {}
    /// CryptoKit's P-384.
    public enum P384: StandIn {}
    /// CryptoKit's HKDF.
    public enum HKDF: StandIn {}
    /// CryptoKit's HMAC.
    public enum HMAC: StandIn {}
    /// CryptoKit's insecure digests.
    public enum Insecure: StandIn {}
    /// CryptoKit's AES.
    public enum AES: StandIn {}
    /// CryptoKit's ChaChaPoly.
    public enum ChaChaPoly: StandIn {}
    /// CryptoKit's Curve25519.
    public enum Curve25519: StandIn {}
#endif

#if !canImport(os)
    /// `os.Logger`.
    public struct Logger: StandIn {}
#endif

/// GRDB's database.
public final class Database: StandIn {}
/// GRDB's database queue.
public final class DatabaseQueue: StandIn {}
/// GRDB's database pool.
public final class DatabasePool: StandIn {}
/// GRDB's row.
public final class Row: StandIn {}
/// GRDB's statement.
public final class Statement: StandIn {}
/// GRDB's database value.
public struct DatabaseValue: StandIn {}
/// GRDB's value conversion protocol.
public protocol DatabaseValueConvertible {}
/// GRDB's statement arguments.
public struct StatementArguments: StandIn {}
/// GRDB's column.
public struct Column: StandIn {}
/// GRDB's migrator.
public struct DatabaseMigrator: StandIn {}
/// GRDB's error.
public struct DatabaseError: StandIn {}
/// GRDB's configuration.
public struct Configuration: StandIn {}
/// GRDB's record base class.
public class Record: StandIn {}
