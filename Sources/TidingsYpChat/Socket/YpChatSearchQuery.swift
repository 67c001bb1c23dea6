/// The filters of `userSearch`: part of a name, an age range, countries and genders (empty lists
/// mean any).
public struct YpChatSearchQuery: Sendable, Equatable {
    /// Text the nickname must contain (empty: any).
    public var nameIncludes: String
    /// The youngest age.
    public var minAge: Int
    /// The oldest age.
    public var maxAge: Int
    /// Country codes (empty: any).
    public var countries: [String]
    /// Gender codes (empty: any).
    public var genders: [String]

    /// A query; the default ages are the app's bounds, 18 to 99.
    public init(
        nameIncludes: String = "", minAge: Int = 18, maxAge: Int = 99, countries: [String] = [], genders: [String] = []
    ) {
        self.nameIncludes = nameIncludes
        self.minAge = minAge
        self.maxAge = maxAge
        self.countries = countries
        self.genders = genders
    }
}
