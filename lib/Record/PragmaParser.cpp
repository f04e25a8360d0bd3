//===- PragmaParser.cpp - Parsing '#pragma fpm partition' -----------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One parser per clause, each with the Clang-style errors of its malformed
// forms, and the reading of kernel(...)'s file: the clause grammar of
// docs/pragma.md in one place, with the `data` and `update` pragmas'
// sections (parseDataClauses), about 1,060 lines: one parser per clause,
// sharing the token reader and its diagnostics, which a split would have
// to export. The schedules and the rule of their argument are the
// runtime's: fpm/schedules.def and readScheduleArgument()
// (fpm/schedules.hpp).
//
//===----------------------------------------------------------------------===//

#include "Record/PragmaParser.h"

#include "fpm/schedules.hpp"

#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/LiteralSupport.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <optional>

using namespace clang;

namespace fpm {
namespace {

using Level = DiagnosticsEngine::Level;

/// The spelling of an identifier or keyword token, or "" for any other.
StringRef identifierOf(const Token &Tok) {
  if (const IdentifierInfo *II = Tok.getIdentifierInfo())
    return II->getName();
  return "";
}

/// S with its line splices (backslash, newline) turned into spaces: a
/// pragma's clauses may continue over several lines.
std::string unsplice(StringRef S) {
  std::string Out;
  for (size_t I = 0; I < S.size(); ++I) {
    if (S[I] == '\\') {
      size_t J = I + 1;
      while (J < S.size() && (S[J] == ' ' || S[J] == '\t'))
        ++J;
      if (J < S.size() && (S[J] == '\n' || S[J] == '\r')) {
        if (S[J] == '\r' && J + 1 < S.size() && S[J + 1] == '\n')
          ++J;
        Out += ' ';
        I = J;
        continue;
      }
    }
    Out += S[I];
  }
  return StringRef(Out).trim().str();
}

/// A schedule the pragma may name: a line of fpm/schedules.def.
struct PragmaSchedule {
  /// The table's name; the pragma writes it with '_' for '-'.
  std::string_view Name;
  ScheduleArgument Argument;
};

constexpr PragmaSchedule PragmaSchedules[] = {
#define FPM_SCHEDULE(Name, Kind, Argument, Summary)                            \
  PragmaSchedule{Name, ScheduleArgument::Argument},
#include "fpm/schedules.def"
};

const PragmaSchedule *findPragmaSchedule(StringRef Name) {
  for (const PragmaSchedule &Schedule : PragmaSchedules)
    if (pragmaSpelling(Schedule.Name) == Name)
      return &Schedule;
  return nullptr;
}

/// "equal, cpm, ..., auto", for the error at an unknown schedule.
std::string knownPragmaSchedules() {
  std::string Known;
  for (const PragmaSchedule &Schedule : PragmaSchedules)
    Known += (Known.empty() ? "" : ", ") + pragmaSpelling(Schedule.Name);
  return Known;
}

/// Parses the clause list of one pragma, reporting as it goes.
class ClauseParser {
public:
  ClauseParser(Preprocessor &PP, ArrayRef<Token> Tokens, SourceLocation EndLoc,
               PartitionPragma &Pragma)
      : PP(PP), Diags(PP.getDiagnostics()), Tokens(Tokens), EndLoc(EndLoc),
        Pragma(Pragma) {}

  bool parse();

private:
  /// The text between two locations of the pragma, trimmed.
  std::string textBetween(SourceLocation Begin, SourceLocation End) const {
    return Lexer::getSourceText(CharSourceRange::getCharRange(Begin, End),
                                PP.getSourceManager(), PP.getLangOpts())
        .trim()
        .str();
  }
  std::string spelling(const Token &Tok) const { return PP.getSpelling(Tok); }

  /// A clause of Clauses.def: its Parse member reads the arguments of one
  /// occurrence (the tokens between its parentheses; Close is the ')').
  using ParseFn = bool (ClauseParser::*)(const Token &Clause,
                                         ArrayRef<Token> Args,
                                         SourceLocation Close);
  struct ClauseKind {
    StringRef Name;
    bool Repeats;
    ParseFn Parse;
  };
  static ArrayRef<ClauseKind> clauseKinds();

  bool parseName(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseSchedule(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseDevices(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseGrain(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseIn(const Token &Clause, ArrayRef<Token> Args,
               SourceLocation Close) {
    return parseSections(Clause, Args, Close, Pragma.In);
  }
  bool parseOut(const Token &Clause, ArrayRef<Token> Args,
                SourceLocation Close) {
    return parseSections(Clause, Args, Close, Pragma.Out);
  }
  bool parseInOut(const Token &Clause, ArrayRef<Token> Args,
                  SourceLocation Close) {
    return parseSections(Clause, Args, Close, Pragma.InOut);
  }
  bool parseSections(const Token &Clause, ArrayRef<Token> Args,
                     SourceLocation Close,
                     llvm::SmallVectorImpl<DataSection> &Sections);
  bool parsePrivate(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseKernel(const Token &, ArrayRef<Token> Args, SourceLocation Close);
  bool parseReduction(const Token &, ArrayRef<Token> Args,
                      SourceLocation Close);
  bool checkReductionNames();

  /// Records the expression Toks (not empty) for ClauseSema.
  void addExpr(ClauseExpr::Kind K, std::string What, ArrayRef<Token> Toks) {
    ClauseExpr E;
    E.K = K;
    E.What = std::move(What);
    E.Tokens.assign(Toks.begin(), Toks.end());
    E.Loc = Toks.front().getLocation();
    Pragma.Exprs.push_back(std::move(E));
  }

  Preprocessor &PP;
  DiagnosticsEngine &Diags;
  ArrayRef<Token> Tokens;
  SourceLocation EndLoc;
  PartitionPragma &Pragma;
};

ArrayRef<ClauseParser::ClauseKind> ClauseParser::clauseKinds() {
  static const ClauseKind Kinds[] = {
#define FPM_CLAUSE(Name, Repeats, Parse) {Name, Repeats, &ClauseParser::Parse},
#include "Record/Clauses.def"
  };
  return Kinds;
}

bool ClauseParser::parse() {
  bool Ok = true;
  llvm::StringMap<SourceLocation> Seen;
  size_t Pos = 0;
  while (Pos < Tokens.size()) {
    const Token &Clause = Tokens[Pos];
    if (Clause.is(tok::comma)) { // Commas may separate clauses.
      ++Pos;
      continue;
    }
    StringRef Name = identifierOf(Clause);
    const ClauseKind *Kind = llvm::find_if(
        clauseKinds(), [&](const ClauseKind &K) { return K.Name == Name; });
    if (Kind == clauseKinds().end()) {
      if (Name.empty()) {
        ArrayRef<ClauseKind> Kinds = clauseKinds();
        std::string Names;
        for (size_t I = 0; I < Kinds.size(); ++I)
          Names += (I == 0                  ? ""
                    : I + 1 == Kinds.size() ? " or "
                                            : ", ") +
                   Kinds[I].Name.str();
        report(Diags, Clause.getLocation(), Level::Error,
               "expected a clause of '#pragma fpm partition' (%0)")
            << Names;
      } else
        report(Diags, Clause.getLocation(), Level::Error,
               "unknown clause '%0' in '#pragma fpm partition'")
            << Name;
      return false;
    }
    auto [It, Inserted] = Seen.try_emplace(Name, Clause.getLocation());
    if (!Inserted && !Kind->Repeats) {
      report(Diags, Clause.getLocation(), Level::Error,
             "duplicate '%0' clause in '#pragma fpm partition'")
          << Name;
      report(Diags, It->second, Level::Note, "previous '%0' clause is here")
          << Name;
      Ok = false;
    }
    ++Pos;
    if (Pos == Tokens.size() || Tokens[Pos].isNot(tok::l_paren)) {
      report(Diags, Pos == Tokens.size() ? EndLoc : Tokens[Pos].getLocation(),
             Level::Error, "expected '(' after '%0'")
          << Name;
      return false;
    }
    // The arguments run to the matching ')'.
    size_t Open = Pos++;
    unsigned Depth = 1;
    size_t ArgBegin = Pos;
    for (; Pos < Tokens.size(); ++Pos) {
      if (Tokens[Pos].isOneOf(tok::l_paren, tok::l_square))
        ++Depth;
      else if (Tokens[Pos].isOneOf(tok::r_paren, tok::r_square) && --Depth == 0)
        break;
    }
    if (Pos == Tokens.size() || Tokens[Pos].isNot(tok::r_paren)) {
      report(Diags, Pos == Tokens.size() ? EndLoc : Tokens[Pos].getLocation(),
             Level::Error, "expected ')' to close '%0('")
          << Name;
      report(Diags, Tokens[Open].getLocation(), Level::Note,
             "to match this '('");
      return false;
    }
    ArrayRef<Token> Args = Tokens.slice(ArgBegin, Pos - ArgBegin);
    SourceLocation Close = Tokens[Pos].getLocation();
    ++Pos;
    Ok &= (this->*Kind->Parse)(Clause, Args, Close);
  }
  return Ok && checkReductionNames();
}

bool ClauseParser::parseName(const Token &, ArrayRef<Token> Args,
                             SourceLocation Close) {
  // A name is an identifier or identifiers joined by '.', written without
  // spaces: the shape of the default names (`matmul.rows`, `jacobi.main.0`),
  // which the lexer splits into identifiers, periods and numbers like `.0`.
  std::string Name;
  size_t Bad = Args.empty() || identifierOf(Args[0]).empty() ? 0 : Args.size();
  for (size_t I = 0; I < Args.size() && Bad == Args.size(); ++I) {
    const Token &Tok = Args[I];
    if (I > 0 && Tok.hasLeadingSpace())
      Bad = I;
    else if (StringRef Id = identifierOf(Tok); !Id.empty())
      Name += Id;
    else if (Tok.is(tok::period))
      Name += '.';
    else if (Tok.is(tok::numeric_constant) && Tok.getLiteralData())
      Name += StringRef(Tok.getLiteralData(), Tok.getLength());
    else
      Bad = I;
  }
  if (Bad == Args.size() && !Name.empty() && Name.back() == '.')
    Bad = Args.size() - 1;
  if (Bad != Args.size() || Args.empty()) {
    report(Diags, Args.empty() ? Close : Args[Bad].getLocation(), Level::Error,
           "expected one name in 'name(...)': an identifier, or identifiers "
           "joined by '.'");
    return false;
  }
  Pragma.Name = std::move(Name);
  return true;
}

bool ClauseParser::parseSchedule(const Token &, ArrayRef<Token> Args,
                                 SourceLocation Close) {
  if (Args.empty() || identifierOf(Args[0]).empty()) {
    report(Diags, Args.empty() ? Close : Args[0].getLocation(), Level::Error,
           "expected a schedule kind in 'schedule(...)'");
    return false;
  }
  StringRef Kind = identifierOf(Args[0]);
  const PragmaSchedule *Schedule = findPragmaSchedule(Kind);
  if (!Schedule) {
    report(Diags, Args[0].getLocation(), Level::Error,
           "unknown schedule '%0' (known: %1)")
        << Kind << knownPragmaSchedules();
    return false;
  }
  // The argument's form is the spec's: `css(k)` when it is required,
  // `gss, a` when it is optional. Its value is read by the runtime's rule.
  ArrayRef<Token> Rest = Args.drop_front();
  ScheduleArgumentValue Value;
  switch (Schedule->Argument) {
  case ScheduleArgument::NoArgument:
    if (!Rest.empty()) {
      report(Diags, Rest[0].getLocation(), Level::Error,
             "schedule '%0' takes no argument")
          << Kind;
      return false;
    }
    Pragma.Schedule = Kind.str();
    return true;
  case ScheduleArgument::RequiredChunk:
    if (Rest.size() != 3 || Rest[0].isNot(tok::l_paren) ||
        Rest[1].isNot(tok::numeric_constant) || Rest[2].isNot(tok::r_paren) ||
        !readScheduleArgument(Kind, Schedule->Argument, spelling(Rest[1]),
                              Value)
             .empty()) {
      report(Diags, Rest.empty() ? Close : Rest[0].getLocation(), Level::Error,
             "schedule '%0' needs a positive chunk size: '%0(k)'")
          << Kind;
      return false;
    }
    Pragma.Schedule = (Kind + "(" + spelling(Rest[1]) + ")").str();
    return true;
  case ScheduleArgument::OptionalBacktrack:
  case ScheduleArgument::OptionalAlpha:
    break;
  }
  if (Rest.empty()) {
    Pragma.Schedule = Kind.str();
    return true;
  }
  if (Rest.size() != 2 || Rest[0].isNot(tok::comma) ||
      Rest[1].isNot(tok::numeric_constant)) {
    report(Diags,
           Rest.size() >= 2 && Rest[0].is(tok::comma) ? Rest[1].getLocation()
                                                      : Rest[0].getLocation(),
           Level::Error, "expected '%0' or '%0, <number>' in 'schedule(...)'")
        << Kind;
    return false;
  }
  if (std::string Problem = readScheduleArgument(Kind, Schedule->Argument,
                                                 spelling(Rest[1]), Value);
      !Problem.empty()) {
    report(Diags, Rest[1].getLocation(), Level::Error, "%0") << Problem;
    return false;
  }
  Pragma.Schedule = (Kind + ", " + spelling(Rest[1])).str();
  return true;
}

bool ClauseParser::parseDevices(const Token &, ArrayRef<Token> Args,
                                SourceLocation Close) {
  bool Cpu = false, Gpu = false;
  bool ExpectName = true;
  for (const Token &Tok : Args) {
    if (!ExpectName) {
      if (Tok.isNot(tok::comma) && Tok.isNot(tok::pipe)) {
        report(Diags, Tok.getLocation(), Level::Error,
               "expected ',' between devices");
        return false;
      }
      ExpectName = true;
      continue;
    }
    StringRef Name = identifierOf(Tok);
    if (Name == "cpu") {
      Cpu = true;
    } else if (Name == "gpu") {
      Gpu = true;
    } else if (Name == "all") {
      Cpu = Gpu = true;
    } else {
      report(Diags, Tok.getLocation(), Level::Error,
             "unknown device '%0' in 'devices(...)' (known: cpu, gpu, all)")
          << spelling(Tok);
      return false;
    }
    ExpectName = false;
  }
  if (ExpectName) {
    report(Diags, Close, Level::Error,
           "expected a device in 'devices(...)' (cpu, gpu or all)");
    return false;
  }
  Pragma.Devices = Cpu && Gpu ? "all" : Cpu ? "cpu" : "gpu";
  return true;
}

bool ClauseParser::parseGrain(const Token &, ArrayRef<Token> Args,
                              SourceLocation Close) {
  if (Args.empty()) {
    report(Diags, Close, Level::Error, "expected a grain size in 'grain(...)'");
    return false;
  }
  // Its value (at least 1, fitting int64_t) is ClauseSema's to check, with
  // its type, at the loop.
  Pragma.Grain = textBetween(Args.front().getLocation(), Close);
  Pragma.GrainLoc = Args.front().getLocation();
  addExpr(ClauseExpr::Kind::Grain, "the grain", Args);
  return true;
}

bool ClauseParser::parseSections(const Token &Clause, ArrayRef<Token> Args,
                                 SourceLocation Close,
                                 llvm::SmallVectorImpl<DataSection> &Sections) {
  StringRef ClauseName = identifierOf(Clause);
  size_t Pos = 0;
  auto Fail = [&](SourceLocation Loc) {
    report(Diags, Loc, Level::Error,
           "expected an array section 'array[lower:length]' in '%0(...)'")
        << ClauseName;
    return false;
  };
  auto LocAt = [&](size_t I) {
    return I < Args.size() ? Args[I].getLocation() : Close;
  };
  if (Args.empty())
    return Fail(Close);
  while (Pos < Args.size()) {
    size_t Begin = Pos;
    if (identifierOf(Args[Pos]).empty())
      return Fail(LocAt(Pos));
    ++Pos;
    unsigned Dims = 0;
    llvm::SmallVector<DataSection::Bounds, 2> DimBounds;
    // Each dimension's bounds, named once the section's text is known.
    llvm::SmallVector<std::pair<ArrayRef<Token>, ArrayRef<Token>>, 2> Bounds;
    while (Pos < Args.size() && Args[Pos].is(tok::l_square)) {
      // One [lower:length], with a ':' at depth 0 and something either side.
      size_t Open = Pos++;
      unsigned Depth = 0;
      size_t Colon = 0;
      for (; Pos < Args.size(); ++Pos) {
        const Token &Tok = Args[Pos];
        if (Tok.isOneOf(tok::l_paren, tok::l_square))
          ++Depth;
        else if (Tok.isOneOf(tok::r_paren, tok::r_square) && Depth-- == 0)
          break;
        else if (Tok.is(tok::colon) && Depth == 0 && !Colon)
          Colon = Pos;
      }
      if (Pos == Args.size() || Args[Pos].isNot(tok::r_square) || !Colon ||
          Colon == Open + 1 || Colon + 1 == Pos)
        return Fail(Colon ? LocAt(Colon) : LocAt(Pos));
      Bounds.push_back({Args.slice(Open + 1, Colon - Open - 1),
                        Args.slice(Colon + 1, Pos - Colon - 1)});
      DimBounds.push_back({unsplice(textBetween(Args[Open + 1].getLocation(),
                                                Args[Colon].getLocation())),
                           unsplice(textBetween(Args[Colon + 1].getLocation(),
                                                Args[Pos].getLocation()))});
      ++Pos;
      ++Dims;
    }
    if (!Dims)
      return Fail(LocAt(Pos));
    DataSection Section;
    Section.Array = identifierOf(Args[Begin]).str();
    Section.Text = unsplice(textBetween(Args[Begin].getLocation(), LocAt(Pos)));
    Section.Lower = DimBounds[0].Lower;
    Section.Length = DimBounds[0].Length;
    Section.Dims = Dims;
    Section.DimBounds = std::move(DimBounds);
    Section.ArrayIsMacro = PP.isMacroDefined(Section.Array);
    Section.Loc = Args[Begin].getLocation();
    for (size_t D = 0; D < Bounds.size(); ++D) {
      std::string Of = (D ? " of dimension " + std::to_string(D + 1) : "") +
                       " of the section '" + Section.Text + "'";
      addExpr(ClauseExpr::Kind::Bound, "the lower bound" + Of, Bounds[D].first);
      addExpr(ClauseExpr::Kind::Bound, "the length" + Of, Bounds[D].second);
      for (ClauseExpr *E : {&Pragma.Exprs.end()[-2], &Pragma.Exprs.end()[-1]}) {
        E->Clause = ClauseName.str();
        E->Section = Sections.size();
        E->Dim = D;
      }
      Pragma.Exprs.back().IsLength = true;
    }
    for (size_t I = Begin; I < Pos; ++I)
      if (StringRef Id = identifierOf(Args[I]);
          !Id.empty() &&
          (I == Begin || !Args[I - 1].isOneOf(tok::period, tok::arrow)) &&
          !llvm::is_contained(Section.Names, Id))
        Section.Names.push_back(Id.str());
    Sections.push_back(std::move(Section));
    if (Pos < Args.size()) {
      if (Args[Pos].isNot(tok::comma) || Pos + 1 == Args.size())
        return Fail(LocAt(Pos + (Args[Pos].is(tok::comma) ? 1 : 0)));
      ++Pos;
    }
  }
  return true;
}

bool ClauseParser::parsePrivate(const Token &, ArrayRef<Token> Args,
                                SourceLocation Close) {
  if (Args.empty()) {
    report(Diags, Close, Level::Error,
           "expected a variable name in 'private(...)'");
    return false;
  }
  for (size_t Pos = 0; Pos < Args.size(); ++Pos) {
    if (Pos % 2) {
      if (Args[Pos].isNot(tok::comma) || Pos + 1 == Args.size()) {
        report(Diags,
               Args[Pos].is(tok::comma) ? Close : Args[Pos].getLocation(),
               Level::Error,
               "expected a comma-separated list of variable "
               "names in 'private(...)'");
        return false;
      }
      continue;
    }
    StringRef Name = identifierOf(Args[Pos]);
    if (Name.empty()) {
      report(Diags, Args[Pos].getLocation(), Level::Error,
             "expected a variable name in 'private(...)'");
      return false;
    }
    if (llvm::any_of(Pragma.Private,
                     [&](const PrivateName &P) { return P.Name == Name; })) {
      report(Diags, Args[Pos].getLocation(), Level::Error,
             "'%0' is listed twice in 'private(...)'")
          << Name;
      return false;
    }
    Pragma.Private.push_back({Name.str(), Args[Pos].getLocation()});
  }
  return true;
}

bool ClauseParser::parseKernel(const Token &, ArrayRef<Token> Args,
                               SourceLocation Close) {
  auto LocAt = [&](size_t I) {
    return I < Args.size() ? Args[I].getLocation() : Close;
  };
  // The file: one ordinary string literal, then the kernel's name.
  if (Args.empty() || Args[0].isNot(tok::string_literal)) {
    report(Diags, LocAt(0), Level::Error,
           "expected the kernel's file as a string literal in "
           "'kernel(\"file.cl\", name[, arg, ...])'");
    return false;
  }
  DiagnosticErrorTrap Trap(Diags);
  StringLiteralParser Literal(Args[0], PP);
  if (Literal.hadError || Trap.hasErrorOccurred())
    return false; // Reported by the literal's parser.
  if (Literal.GetString().empty() || Literal.GetString().contains('\0')) {
    report(Diags, LocAt(0), Level::Error,
           "expected a file name in the string literal of 'kernel(...)'");
    return false;
  }
  if (Args.size() < 3 || Args[1].isNot(tok::comma) ||
      identifierOf(Args[2]).empty()) {
    report(Diags, LocAt(Args.size() > 1 && Args[1].is(tok::comma) ? 2 : 1),
           Level::Error,
           "expected the kernel's name after its file in "
           "'kernel(\"file.cl\", name[, arg, ...])'");
    return false;
  }
  Pragma.KernelFile = Literal.GetString().str();
  Pragma.KernelName = identifierOf(Args[2]).str();
  Pragma.KernelFileLoc = Args[0].getLocation();
  Pragma.KernelNameLoc = Args[2].getLocation();
  // Then the arguments, each after a comma; commas inside parentheses,
  // brackets or braces belong to the argument.
  size_t Pos = 3;
  if (Pos < Args.size() && Args[Pos].isNot(tok::comma)) {
    report(Diags, LocAt(Pos), Level::Error,
           "expected ',' or ')' after the kernel's name");
    return false;
  }
  while (Pos < Args.size()) {
    size_t Begin = ++Pos;
    unsigned Depth = 0;
    for (; Pos < Args.size(); ++Pos) {
      const Token &Tok = Args[Pos];
      if (Tok.isOneOf(tok::l_paren, tok::l_square, tok::l_brace))
        ++Depth;
      else if (Tok.isOneOf(tok::r_paren, tok::r_square, tok::r_brace) && Depth)
        --Depth;
      else if (Tok.is(tok::comma) && Depth == 0)
        break;
    }
    if (Pos == Begin) {
      report(Diags, LocAt(Pos), Level::Error,
             "expected an argument of the kernel after ','");
      return false;
    }
    Pragma.KernelArgs.push_back(
        {unsplice(textBetween(Args[Begin].getLocation(), LocAt(Pos))),
         Args[Begin].getLocation()});
    addExpr(ClauseExpr::Kind::KernelArg,
            "the kernel's argument '" + Pragma.KernelArgs.back().Text + "'",
            Args.slice(Begin, Pos - Begin));
    Pragma.Exprs.back().Text = Pragma.KernelArgs.back().Text;
  }
  return true;
}

/// `reduction(op: a, b, ...)`.
bool ClauseParser::parseReduction(const Token &, ArrayRef<Token> Args,
                                  SourceLocation Close) {
  if (Args.empty()) {
    report(Diags, Close, Level::Error,
           "expected 'op: list' in 'reduction(...)', op one of +, *, min, "
           "max, &, |, ^, && or ||");
    return false;
  }
  const Token &OpTok = Args[0];
  std::optional<ReductionOp> Op;
  switch (OpTok.getKind()) {
  case tok::plus:
    Op = ReductionOp::Add;
    break;
  case tok::star:
    Op = ReductionOp::Mul;
    break;
  case tok::amp:
    Op = ReductionOp::BitAnd;
    break;
  case tok::pipe:
    Op = ReductionOp::BitOr;
    break;
  case tok::caret:
    Op = ReductionOp::BitXor;
    break;
  case tok::ampamp:
    Op = ReductionOp::And;
    break;
  case tok::pipepipe:
    Op = ReductionOp::Or;
    break;
  default:
    if (identifierOf(OpTok) == "min")
      Op = ReductionOp::Min;
    else if (identifierOf(OpTok) == "max")
      Op = ReductionOp::Max;
    break;
  }
  if (!Op) {
    report(Diags, OpTok.getLocation(), Level::Error,
           "unknown reduction operator '%0' in 'reduction(op: list)' (known: "
           "+, *, min, max, &, |, ^, &&, ||)")
        << spelling(OpTok);
    return false;
  }
  if (Args.size() < 2 || Args[1].isNot(tok::colon)) {
    report(Diags, Args.size() < 2 ? Close : Args[1].getLocation(), Level::Error,
           "expected ':' after the reduction operator '%0' in 'reduction(%0: "
           "list)'")
        << reductionOpSpelling(*Op);
    return false;
  }
  ArrayRef<Token> List = Args.drop_front(2);
  if (List.empty()) {
    report(Diags, Close, Level::Error,
           "expected a variable name in 'reduction(...)'");
    return false;
  }
  for (size_t Pos = 0; Pos < List.size(); ++Pos) {
    if (Pos % 2) {
      if (List[Pos].isNot(tok::comma) || Pos + 1 == List.size()) {
        report(Diags,
               List[Pos].is(tok::comma) ? Close : List[Pos].getLocation(),
               Level::Error,
               "expected a comma-separated list of variable names in "
               "'reduction(...)'");
        return false;
      }
      continue;
    }
    StringRef Name = identifierOf(List[Pos]);
    if (Name.empty()) {
      report(Diags, List[Pos].getLocation(), Level::Error,
             "expected a variable name in 'reduction(...)'");
      return false;
    }
    if (llvm::any_of(Pragma.Reductions,
                     [&](const ReductionName &R) { return R.Name == Name; })) {
      report(Diags, List[Pos].getLocation(), Level::Error,
             "'%0' is listed twice in 'reduction(...)'")
          << Name;
      return false;
    }
    Pragma.Reductions.push_back(
        {*Op, Name.str(), List[Pos].getLocation(), OpTok.getLocation()});
  }
  return true;
}

/// A reduction variable is in no other clause that says how the loop
/// shares a variable (private, in, out, inout); a hand-written kernel
/// takes each one once among its arguments (its partial results, one per
/// work-group).
bool ClauseParser::checkReductionNames() {
  bool Ok = true;
  for (const ReductionName &R : Pragma.Reductions) {
    auto Private = llvm::find_if(
        Pragma.Private, [&](const PrivateName &P) { return P.Name == R.Name; });
    if (Private != Pragma.Private.end()) {
      report(Diags, R.Loc, Level::Error,
             "'%0' is in both 'reduction(...)' and 'private(...)'")
          << R.Name;
      report(Diags, Private->Loc, Level::Note, "'%0' is private here")
          << R.Name;
      Ok = false;
    }
    for (auto [Clause, Sections] :
         {std::pair<StringRef, const llvm::SmallVectorImpl<DataSection> *>{
              "in", &Pragma.In},
          {"out", &Pragma.Out},
          {"inout", &Pragma.InOut}})
      for (const DataSection &Section : *Sections)
        if (Section.Array == R.Name) {
          report(Diags, R.Loc, Level::Error,
                 "'%0' is in both 'reduction(...)' and '%1(...)': a "
                 "reduction variable is a scalar, a data clause names arrays")
              << R.Name << Clause;
          report(Diags, Section.Loc, Level::Note, "'%0' is in '%1(...)' here")
              << R.Name << Clause;
          Ok = false;
        }
    if (Pragma.KernelName.empty())
      continue;
    unsigned Passed = 0;
    for (const KernelArgument &Arg : Pragma.KernelArgs)
      Passed += Arg.Text == R.Name;
    if (Passed != 1) {
      report(Diags, Pragma.KernelNameLoc, Level::Error,
             "the kernel '%0' takes the reduction variable '%1' %2 times "
             "among its arguments; it must take it once (as a '__global' "
             "pointer to one partial result per work-group)")
          << Pragma.KernelName << R.Name << Passed;
      report(Diags, R.Loc, Level::Note, "'%0' is a reduction variable here")
          << R.Name;
      Ok = false;
    }
  }
  return Ok;
}

} // namespace

bool parsePartitionClauses(Preprocessor &PP, ArrayRef<Token> Tokens,
                           SourceLocation EndLoc, PartitionPragma &Pragma) {
  return ClauseParser(PP, Tokens, EndLoc, Pragma).parse();
}

bool kernelArgIsScalar(const PartitionPragma &Pragma, StringRef Text) {
  for (const auto *Sections : {&Pragma.In, &Pragma.Out, &Pragma.InOut})
    for (const DataSection &Section : *Sections)
      if (Section.Array == Text)
        return false;
  return llvm::none_of(Pragma.Reductions,
                       [&](const ReductionName &R) { return R.Name == Text; });
}

void expandClauseMacros(Preprocessor &PP, PartitionPragma &Pragma) {
  if (Pragma.Exprs.empty())
    return;
  // One stream of every expression's tokens, each ended by an eof, lexed back
  // with macros expanded. The preprocessor is past the directive's end: the
  // stream is read to its last token here, and the next token lexed after it is
  // the line after the pragma. An eof is never lost in a macro's arguments (an
  // unterminated call is an error that hands it back), so no token of the file
  // is read here.
  llvm::SmallVector<Token, 32> Stream;
  for (ClauseExpr &E : Pragma.Exprs) {
    llvm::append_range(Stream, E.Tokens);
    Token End;
    End.startToken();
    End.setKind(tok::eof);
    End.setLocation(E.Tokens.back().getEndLoc());
    Stream.push_back(End);
  }
  PP.EnterTokenStream(Stream, /*DisableMacroExpansion=*/false,
                      /*IsReinject=*/false);
  for (ClauseExpr &E : Pragma.Exprs) {
    E.Tokens.clear();
    Token Tok;
    for (PP.Lex(Tok); Tok.isNot(tok::eof); PP.Lex(Tok))
      E.Tokens.push_back(Tok);
  }
}

/// What a file that is not a regular one is, for messages, as the runtime's
/// readRegularFile says it; none for a regular file.
static std::optional<StringRef> irregularKind(llvm::sys::fs::file_type Type) {
  using llvm::sys::fs::file_type;
  switch (Type) {
  case file_type::regular_file:
    return std::nullopt;
  case file_type::directory_file:
    return StringRef("a directory");
  case file_type::fifo_file:
    return StringRef("a FIFO");
  case file_type::character_file:
    return StringRef("a character device");
  case file_type::block_file:
    return StringRef("a block device");
  case file_type::socket_file:
    return StringRef("a socket");
  default:
    return StringRef("not a file");
  }
}

bool loadKernel(Preprocessor &PP, PartitionPragma &Pragma) {
  if (Pragma.KernelName.empty())
    return true;
  SourceManager &SM = PP.getSourceManager();
  FileManager &FM = PP.getFileManager();
  DiagnosticsEngine &Diags = PP.getDiagnostics();
  // Where `#include "..."` looks first: the directory of the file the
  // pragma is in.
  llvm::SmallString<256> Path;
  if (!llvm::sys::path::is_absolute(Pragma.KernelFile))
    if (OptionalFileEntryRef File = SM.getFileEntryRefForID(
            SM.getFileID(SM.getExpansionLoc(Pragma.KernelFileLoc))))
      Path = File->getDir().getName();
  llvm::sys::path::append(Path, Pragma.KernelFile);
  llvm::sys::path::remove_dots(Path);
  auto CannotRead = [&](const std::string &Why) {
    report(Diags, Pragma.KernelFileLoc, Level::Error,
           "cannot read the kernel file '%0': %1")
        << Path << Why;
    return false;
  };
  llvm::Expected<FileEntryRef> Entry = FM.getFileRef(Path);
  if (!Entry)
    return CannotRead(llvm::toString(Entry.takeError()));
  // Only a regular file (or a link to one): opening a FIFO would wait for a
  // writer, and a device such as /dev/zero never ends. Looked at before it
  // is opened.
  llvm::ErrorOr<llvm::vfs::Status> Status =
      FM.getVirtualFileSystem().status(Path);
  if (!Status)
    return CannotRead(Status.getError().message());
  if (std::optional<StringRef> Kind = irregularKind(Status->getType()))
    return CannotRead(("not a regular file (" + *Kind + ")").str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer =
      FM.getBufferForFile(*Entry);
  if (!Buffer)
    return CannotRead(Buffer.getError().message());
  // One name per file, whatever way the pragma reaches it: the real path.
  llvm::SmallString<256> RealPath;
  if (FM.getVirtualFileSystem().getRealPath(Path, RealPath))
    RealPath = Path;
  Pragma.KernelPath = RealPath.str().str();
  Pragma.KernelSource = (*Buffer)->getBuffer().str();
  // A simple check that the file defines the kernel: `__kernel void NAME(`
  // or `kernel void NAME(`, not inside another identifier.
  llvm::Regex Definition(
      "(^|[^A-Za-z0-9_])(__)?kernel[[:space:]]+void[[:space:]]+" +
      Pragma.KernelName + "[[:space:]]*\\(");
  if (!Definition.match(Pragma.KernelSource)) {
    report(Diags, Pragma.KernelNameLoc, Level::Error,
           "no kernel '%0' in '%1': it has no '__kernel void %0('")
        << Pragma.KernelName << Pragma.KernelPath;
    return false;
  }
  return true;
}

bool parseDataClauses(Preprocessor &PP, ArrayRef<Token> Tokens,
                      SourceLocation EndLoc, DataPragma &Pragma) {
  DiagnosticsEngine &Diags = PP.getDiagnostics();
  const bool Update = Pragma.K == DataPragma::Kind::Update;
  const char *Directive = Update ? "update" : "data";
  auto text = [&](const Token &First, const Token &Last) {
    return unsplice(Lexer::getSourceText(
        CharSourceRange::getCharRange(First.getLocation(), Last.getEndLoc()),
        PP.getSourceManager(), PP.getLangOpts()));
  };
  size_t Pos = 0;
  if (Tokens.empty()) {
    if (Update)
      report(Diags, EndLoc, Level::Error,
             "'#pragma fpm update' needs host(...) or device(...)");
    else
      report(Diags, EndLoc, Level::Error,
             "'#pragma fpm data' needs in(...), out(...), inout(...) or "
             "create(...)");
    return false;
  }
  while (Pos < Tokens.size()) {
    const Token &Clause = Tokens[Pos];
    if (Clause.is(tok::comma)) {
      ++Pos;
      continue;
    }
    StringRef Name = identifierOf(Clause);
    bool Known =
        Update ? llvm::is_contained({"host", "device"}, Name)
               : llvm::is_contained({"in", "out", "inout", "create"}, Name);
    if (!Known) {
      report(Diags, Clause.getLocation(), Level::Error,
             "expected a clause of '#pragma fpm %0' (%1)")
          << Directive
          << (Update ? "host or device" : "in, out, inout or create");
      return false;
    }
    if (++Pos == Tokens.size() || Tokens[Pos].isNot(tok::l_paren)) {
      report(Diags, Pos == Tokens.size() ? EndLoc : Tokens[Pos].getLocation(),
             Level::Error, "expected '(' after '%0'")
          << Name;
      return false;
    }
    ++Pos;
    // Sections up to the matching ')': name [ lower : length ] [ ... ]...
    while (true) {
      if (Pos == Tokens.size()) {
        report(Diags, EndLoc, Level::Error, "expected ')' to close '%0('")
            << Name;
        return false;
      }
      size_t Begin = Pos;
      while (Pos < Tokens.size() &&
             !Tokens[Pos].isOneOf(tok::l_square, tok::comma, tok::r_paren))
        ++Pos;
      if (Pos == Begin || Pos == Tokens.size() ||
          Tokens[Pos].isNot(tok::l_square)) {
        report(Diags, Tokens[std::min(Pos, Tokens.size() - 1)].getLocation(),
               Level::Error,
               "expected a section 'array[0:elements]' in '%0(...)'")
            << Name;
        return false;
      }
      DataPragma::Array Array;
      Array.Clause = Name.str();
      Array.Name = text(Tokens[Begin], Tokens[Pos - 1]);
      Array.Loc = Tokens[Begin].getLocation();
      // Every dimension's brackets; the first gives the elements.
      bool First = true;
      while (Pos < Tokens.size() && Tokens[Pos].is(tok::l_square)) {
        size_t Open = Pos++, Colon = 0;
        unsigned Depth = 1;
        for (; Pos < Tokens.size(); ++Pos) {
          if (Tokens[Pos].isOneOf(tok::l_paren, tok::l_square))
            ++Depth;
          else if (Tokens[Pos].isOneOf(tok::r_paren, tok::r_square) &&
                   --Depth == 0)
            break;
          else if (Depth == 1 && Tokens[Pos].is(tok::colon) && !Colon)
            Colon = Pos;
        }
        if (Pos == Tokens.size() || !Colon || Colon == Open + 1 ||
            Colon + 1 == Pos) {
          report(Diags, Tokens[Open].getLocation(), Level::Error,
                 "expected '[lower:length]' in the section of '%0'")
              << Array.Name;
          return false;
        }
        if (First) {
          // A region maps whole arrays: loops find their copy by its start.
          if (Colon != Open + 2 ||
              !Tokens[Open + 1].is(tok::numeric_constant) ||
              text(Tokens[Open + 1], Tokens[Open + 1]) != "0") {
            report(Diags, Tokens[Open + 1].getLocation(), Level::Error,
                   "'#pragma fpm %0' maps an array from its element 0: write "
                   "'%1[0:<elements>]'")
                << Directive << Array.Name;
            return false;
          }
          Array.Length = text(Tokens[Colon + 1], Tokens[Pos - 1]);
          First = false;
        }
        ++Pos;
      }
      Pragma.Arrays.push_back(std::move(Array));
      if (Pos < Tokens.size() && Tokens[Pos].is(tok::comma)) {
        ++Pos;
        continue;
      }
      if (Pos < Tokens.size() && Tokens[Pos].is(tok::r_paren)) {
        ++Pos;
        break;
      }
      report(Diags, Pos < Tokens.size() ? Tokens[Pos].getLocation() : EndLoc,
             Level::Error, "expected ',' or ')' after a section of '%0(...)'")
          << Name;
      return false;
    }
  }
  return true;
}

void FpmPragmaHandler::HandlePragma(Preprocessor &PP,
                                    PragmaIntroducer Introducer,
                                    Token &FirstToken) {
  // FirstToken is `fpm`; read the rest of the directive as written, without
  // expanding macros (they stay in the text the rewriter copies).
  llvm::SmallVector<Token, 32> Tokens;
  Token Tok;
  PP.LexUnexpandedToken(Tok);
  while (Tok.isNot(tok::eod)) {
    Tokens.push_back(Tok);
    PP.LexUnexpandedToken(Tok);
  }
  SourceLocation EndLoc = Tok.getLocation();
  DiagnosticsEngine &Diags = PP.getDiagnostics();
  SourceManager &SM = PP.getSourceManager();

  StringRef Directive = Tokens.empty() ? "" : identifierOf(Tokens[0]);
  if (Directive == "data" || Directive == "update") {
    if (Introducer.Kind != PIK_HashPragma ||
        !SM.isWrittenInMainFile(Introducer.Loc)) {
      report(Diags, Tokens[0].getLocation(), Level::Error,
             "'#pragma fpm %0' must be a '#pragma' line of the file rewritten")
          << Directive;
      return;
    }
    DataPragma Pragma;
    Pragma.K =
        Directive == "data" ? DataPragma::Kind::Data : DataPragma::Kind::Update;
    Pragma.HashLoc = Introducer.Loc;
    Pragma.EndLoc = EndLoc;
    Pragma.KeywordLoc = Tokens[0].getLocation();
    if (parseDataClauses(PP, ArrayRef(Tokens).drop_front(), EndLoc, Pragma) &&
        DataPragmas)
      DataPragmas->push_back(std::move(Pragma));
    return;
  }
  if (Directive != "partition") {
    report(Diags, Tokens.empty() ? EndLoc : Tokens[0].getLocation(),
           Level::Error,
           "expected 'partition', 'data' or 'update' after '#pragma fpm'");
    return;
  }
  if (Introducer.Kind != PIK_HashPragma) {
    report(Diags, Tokens[0].getLocation(), Level::Error,
           "'fpm partition' must be written as a '#pragma' directive");
    return;
  }
  if (!SM.isWrittenInMainFile(Introducer.Loc)) {
    report(Diags, Tokens[0].getLocation(), Level::Warning,
           "'#pragma fpm partition' outside the main file is not rewritten");
    return;
  }

  PartitionPragma Pragma;
  Pragma.HashLoc = Introducer.Loc;
  Pragma.EndLoc = EndLoc;
  Pragma.KeywordLoc = Tokens[0].getLocation();
  Pragma.Text = Lexer::getSourceText(
                    CharSourceRange::getCharRange(Introducer.Loc, EndLoc), SM,
                    PP.getLangOpts())
                    .rtrim()
                    .str();
  (void)FirstToken;
  if (parsePartitionClauses(PP, ArrayRef(Tokens).drop_front(), EndLoc,
                            Pragma) &&
      loadKernel(PP, Pragma)) {
    expandClauseMacros(PP, Pragma);
    Pragmas.push_back(std::move(Pragma));
  }
}

} // namespace fpm
