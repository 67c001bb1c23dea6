/// The foundation at work: an encrypted store filled and read back, a day of polling on a virtual clock.
let coreDemoPart = DemoPart(name: "core", title: "Core: encrypted store and poll schedule") {
    print("(filled in once the store and scheduling core land)")
}
