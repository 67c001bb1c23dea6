import Foundation
import Testing

@testable import TidingsNet

/// The bundled Public Suffix List against the PSL project's own test cases (Tests/Fixtures/psl/
/// test_psl.txt, shipped by Debian's `publicsuffix` package), plus the matching rules on a small list.
@Suite(.timeLimit(.minutes(1))) struct PublicSuffixListTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var domain: String
        var registrable: String?
        var testDescription: String { "\(domain) → \(registrable ?? "nil")" }
    }

    /// Every `checkPublicSuffix('domain', 'expected' | null);` line of the PSL test file.
    static var cases: [Case] {
        guard let text = try? Fixtures.text("psl/test_psl.txt") else { return [] }
        var cases: [Case] = []
        for line in text.split(separator: "\n") where line.hasPrefix("checkPublicSuffix('") {
            let arguments = line.dropFirst("checkPublicSuffix(".count).prefix { $0 != ")" }
            let parts = arguments.split(separator: ",", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2 else { continue }
            func unquote(_ text: String) -> String? {
                text == "null" ? nil : String(text.dropFirst().dropLast())
            }
            guard let domain = unquote(parts[0]) else { continue }
            cases.append(Case(domain: domain, registrable: unquote(parts[1])))
        }
        return cases
    }

    @Test func theOfficialTestFileIsReadInFull() {
        // The file holds 70 non-null cases; a parser bug must not silently shrink the test.
        #expect(Self.cases.count >= 60)
    }

    @Test(arguments: cases)
    func theBundledListPassesTheOfficialTestCase(_ test: Case) {
        #expect(PublicSuffixList.bundled.registrableDomain(of: test.domain) == test.registrable)
    }

    @Test func wildcardsExceptionsAndTheDefaultRuleWork() {
        let list = PublicSuffixList(
            rules: """
                // comment
                com
                *.jp
                *.kobe.jp
                !city.kobe.jp
                co.uk

                """)
        #expect(list.publicSuffix(of: "a.b.example.com") == "com")
        #expect(list.publicSuffix(of: "x.tokyo.jp") == "tokyo.jp")
        #expect(list.publicSuffix(of: "a.b.kobe.jp") == "b.kobe.jp")
        #expect(list.publicSuffix(of: "www.city.kobe.jp") == "kobe.jp")
        #expect(list.registrableDomain(of: "www.city.kobe.jp") == "city.kobe.jp")
        #expect(list.publicSuffix(of: "example.unlisted") == "unlisted")
        #expect(list.isPublicSuffix("co.uk"))
        #expect(list.isPublicSuffix("CO.UK"))
        #expect(!list.isPublicSuffix("bbc.co.uk"))
        #expect(list.publicSuffix(of: "a..com") == nil)
        #expect(list.publicSuffix(of: "") == nil)
    }

    @Test func theBundledListKnowsWellKnownSuffixesAndPrivateDomains() {
        let list = PublicSuffixList.bundled
        for suffix in ["com", "co.uk", "github.io", "s3.amazonaws.com", "xn--55qx5d.cn", "公司.cn"] {
            #expect(list.isPublicSuffix(suffix), "\(suffix)")
        }
        #expect(!list.isPublicSuffix("example.co.uk"))
    }
}

/// The jar's guards: public suffixes, Secure cookies, size limits.
@Suite(.timeLimit(.minutes(1))) struct HTTPCookieJarGuardTests {
    @Test(arguments: ["co.uk", ".co.uk", "github.io", "com"])
    func aDomainThatIsAPublicSuffixIsRefused(domain: String) {
        let jar = HTTPCookieJar()
        let host = domain.hasSuffix("com") ? "www.example.com" : domain.hasSuffix("io") ? "me.github.io" : "bbc.co.uk"
        jar.store(setCookieHeaders: ["tracker=1; Domain=\(domain); Path=/"], from: URL(string: "https://\(host)/")!)
        #expect(jar.all.isEmpty)
        #expect(jar.cookieHeader(for: URL(string: "https://victim.\(domain.trimmingCharacters(in: ["."]))/")!) == nil)
    }

    @Test func aHostThatIsItselfAPublicSuffixGetsAHostOnlyCookie() {
        let jar = HTTPCookieJar()
        jar.store(setCookieHeaders: ["a=1; Domain=github.io; Path=/"], from: URL(string: "https://github.io/")!)
        #expect(jar.all.map(\.hostOnly) == [true])
        #expect(jar.cookieHeader(for: URL(string: "https://me.github.io/")!) == nil)
        #expect(jar.cookieHeader(for: URL(string: "https://github.io/")!) == "a=1")
    }

    @Test func aSecureCookieIsOnlyAcceptedOverHTTPS() {
        let jar = HTTPCookieJar()
        jar.store(setCookieHeaders: ["sid=1; Secure; Path=/"], from: URL(string: "http://chat.example.org/")!)
        #expect(jar.all.isEmpty)
        jar.store(setCookieHeaders: ["sid=1; Secure; Path=/"], from: URL(string: "https://chat.example.org/")!)
        #expect(jar.all.count == 1)
    }

    @Test func plainHTTPCannotOverwriteDeleteOrShadowASecureCookie() {
        let jar = HTTPCookieJar()
        let secureSite = URL(string: "https://chat.example.org/")!
        jar.store(setCookieHeaders: ["sid=good; Secure; Path=/"], from: secureSite)
        let plain = URL(string: "http://chat.example.org/")!
        jar.store(setCookieHeaders: ["sid=evil; Path=/"], from: plain)
        jar.store(setCookieHeaders: ["sid=evil; Domain=example.org; Path=/"], from: plain)
        jar.store(setCookieHeaders: ["sid=gone; Max-Age=0; Path=/"], from: plain)
        #expect(jar.cookieHeader(for: secureSite) == "sid=good")
        // Over https the server may still replace it.
        jar.store(setCookieHeaders: ["sid=new; Secure; Path=/"], from: secureSite)
        #expect(jar.cookieHeader(for: secureSite) == "sid=new")
    }

    @Test func theJarKeepsAtMostItsLimitsDroppingTheOldestFirst() {
        let jar = HTTPCookieJar(maximumCookies: 5, maximumCookiesPerDomain: 3)
        let a = URL(string: "https://a.example.org/")!
        for index in 0..<4 { jar.store(setCookieHeaders: ["a\(index)=1; Path=/"], from: a) }
        #expect(jar.cookieHeader(for: a) == "a1=1; a2=1; a3=1")
        for site in ["b.example.net", "c.example.com", "d.example.edu"] {
            jar.store(setCookieHeaders: ["x=1; Path=/"], from: URL(string: "https://\(site)/")!)
        }
        #expect(jar.all.count == 5)
        #expect(jar.cookieHeader(for: a) == "a2=1; a3=1")
    }

    @Test func anOversizedOrLineBreakingCookieIsIgnored() {
        let jar = HTTPCookieJar()
        let site = URL(string: "https://chat.example.org/")!
        jar.store(setCookieHeaders: ["big=\(String(repeating: "x", count: 5000))"], from: site)
        jar.store(setCookieHeaders: ["bad=a\rInjected: 1"], from: site)
        #expect(jar.all.isEmpty)
    }
}
