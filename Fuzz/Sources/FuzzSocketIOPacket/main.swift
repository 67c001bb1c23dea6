@_cdecl("LLVMFuzzerTestOneInput") public func fuzz(_ d: UnsafePointer<UInt8>, _ n: Int) -> CInt { 0 }
