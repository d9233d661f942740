import Foundation
import UploaderCore

exit(UploaderCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
