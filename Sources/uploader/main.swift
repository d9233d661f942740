import Foundation
import UploaderCommands

exit(UploaderCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
