// receptionist-benchmarks: the receptionist against the plain alternatives, in one run, with
// every row checked for correctness. See Benchmarks/README.md and `--help`.
//
//     swift run -c release receptionist-benchmarks [--quick] [--json]
//
// The scenarios run on a background thread while the main thread runs `RunLoop.main`, so that
// the main-queue rows are served by the real main thread (on Linux, `dispatchMain()` would
// service the main queue from another thread).

import Foundation

#if canImport(Glibc)
import Glibc
#endif

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
// Before any thread starts: the counter's hook is installed once and then only read.
if options.countAllocations { HeapAllocations.install() }

let benchmark = Thread {
    let status =
        if let row = options.childRow {
            Benchmark.runChild(options, row: row)
        } else if options.scale {
            Scale.run(
                quick: options.quick, repetitions: options.repetitions ?? (options.quick ? 1 : 3),
                filter: options.filter)
        } else {
            Benchmark.run(options)
        }
    fflush(nil)  // every stream: the report may still be buffered
    exit(status)
}
benchmark.stackSize = 8 << 20
benchmark.start()

while true {
    _ = RunLoop.main.run(mode: .default, before: .distantFuture)
}
