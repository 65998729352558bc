import ArgumentParser
import HTTPServer

/// `--http-engine`: the loops `HTTPServerConfiguration.Engine` names.
extension HTTPServerConfiguration.Engine: ExpressibleByArgument {}
