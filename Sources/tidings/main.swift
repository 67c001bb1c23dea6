#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

exit(await Runner(root: tidingsRoot).run(Array(CommandLine.arguments.dropFirst())))
