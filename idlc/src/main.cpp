// idlc: the Spindle IDL compiler driver. Parses and checks IDL files, runs the C++
// generator and writes its files (only when their content changed, so builds stay
// incremental), plus a Makefile-syntax depfile for the build system.
//
// Exit codes: 0 success, 1 errors in the IDL, 2 usage or I/O errors.
#include <spindle/idlc/frontend.hpp>
#include <spindle/idlc/generator.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using namespace spindle::idlc;

constexpr int kExitIdlErrors = 1;
constexpr int kExitUsage = 2;

// Make escapes spaces and '$' in depfile paths.
std::string make_escape(const std::string& path) {
  std::string out;
  for (const char c : path) {
    if (c == ' ' || c == '#') {
      out += '\\';
    } else if (c == '$') {
      out += '$';
    }
    out += c;
  }
  return out;
}

bool write_if_changed(const fs::path& path, const std::string& content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == content) {
        return true;
      }
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"idlc: compiles OMG IDL 4.2 into C++ types with CDR codecs for Spindle DDS"};
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;
  std::string outdir = ".";
  std::string depfile;
  std::vector<std::string> files;
  app.add_option("-I", include_dirs, "Add a directory to the #include search path");
  app.add_option("-D", defines, "Define a preprocessor macro: NAME or NAME=VALUE");
  app.add_option("-o,--output-dir", outdir, "Directory for the generated files");
  app.add_option("--depfile", depfile, "Write a Makefile-syntax dependency file");
  app.set_version_flag("--version", std::string("spindle-idlc ") + kIdlcVersion);
  app.add_option("files", files, "IDL files to compile")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  FrontendOptions options;
  options.include_dirs = include_dirs;
  for (const auto& d : defines) {
    const auto eq = d.find('=');
    if (eq == std::string::npos) {
      options.defines.emplace_back(d, "");
    } else {
      options.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
    }
  }

  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (ec) {
    std::cerr << "idlc: cannot create output directory '" << outdir << "': " << ec.message()
              << '\n';
    return kExitUsage;
  }

  int status = 0;
  for (const auto& file : files) {
    if (!fs::is_regular_file(file, ec)) {
      std::cerr << "idlc: cannot open '" << file << "'\n";
      status = std::max(status, kExitUsage);
      continue;
    }
    Diagnostics diags;
    auto spec = parse_file(file, options, diags);
    diags.print(std::cerr);
    if (!spec) {
      status = std::max(status, kExitIdlErrors);
      continue;
    }
    CppGeneratorOptions gen;
    gen.source_name = fs::path(file).filename().string();
    std::vector<GeneratedFile> generated;
    try {
      generated = generate_cpp(*spec, gen);
    } catch (const std::exception& e) {
      std::cerr << "idlc: internal error generating C++ for '" << file << "': " << e.what() << '\n';
      return kExitUsage;
    }
    std::vector<std::string> outputs;
    for (const auto& g : generated) {
      const fs::path target = fs::path(outdir) / g.name;
      if (!write_if_changed(target, g.content)) {
        std::cerr << "idlc: cannot write '" << target.string() << "'\n";
        return kExitUsage;
      }
      outputs.push_back(target.string());
    }
    if (!depfile.empty()) {
      const std::string stem = fs::path(file).stem().string();
      std::string dep = make_escape((fs::path(outdir) / (stem + ".hpp")).string()) + " " +
                        make_escape((fs::path(outdir) / (stem + ".cpp")).string()) + ":";
      for (const auto& src : spec->source_files) {
        dep += " " + make_escape(src);
      }
      dep += "\n";
      if (!write_if_changed(depfile, dep)) {
        std::cerr << "idlc: cannot write '" << depfile << "'\n";
        return kExitUsage;
      }
    }
  }
  return status;
}
