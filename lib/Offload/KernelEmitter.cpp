//===- KernelEmitter.cpp - OpenCL C kernels from loop bodies --------------===//
//
// Part of fpm, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One printer (a clang::PrinterHelper) over every kind of statement and
// expression OpenCL C shares with C, and the refusal of every other kind:
// its cases share the printer's state (the scope, the kernel's parameters,
// the helper functions emitted), which is why they stay in one file of
// more than 600 lines.
//
//===----------------------------------------------------------------------===//

#include "Offload/KernelEmitter.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/PrettyPrinter.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <optional>

using namespace clang;

namespace fpm {
namespace {

/// A C math function and the OpenCL C built-in that computes it. OpenCL's
/// are overloaded on their argument types, so the arguments are converted to
/// the C prototype's types first; an integer `abs` returns an unsigned
/// integer in OpenCL, so its result is converted back.
struct MathFunction {
  const char *OpenCl;
  bool CastResult;
};

const llvm::StringMap<MathFunction> &mathFunctions() {
  static const llvm::StringMap<MathFunction> Map = [] {
    llvm::StringMap<MathFunction> M;
    for (const char *Name :
         {"acos",      "acosh", "asin",      "asinh",    "atan",   "atan2",
          "atanh",     "cbrt",  "ceil",      "copysign", "cos",    "cosh",
          "erf",       "erfc",  "exp",       "exp2",     "expm1",  "fabs",
          "fdim",      "floor", "fma",       "fmax",     "fmin",   "fmod",
          "hypot",     "log",   "log10",     "log1p",    "log2",   "logb",
          "nextafter", "pow",   "remainder", "rint",     "round",  "sin",
          "sinh",      "sqrt",  "tan",       "tanh",     "tgamma", "lgamma",
          "trunc"}) {
      M[Name] = {Name, false};
      M[(std::string(Name) + "f")] = {Name, false};
    }
    for (const char *Name : {"abs", "labs", "llabs"})
      M[Name] = {"abs", true};
    return M;
  }();
  return Map;
}

/// Whether OpenCL C gives Name a meaning that a C or C++ program's name may
/// not have in the kernel: a keyword or type, a built-in function (of OpenCL
/// C 1.2 to 3.0 and the usual extensions; a whole family by its prefix), a
/// macro. A variable of that name would hide the built-in the kernel calls
/// (`barrier`, `get_global_id`, `fabs`), a function of that name collide with
/// it, a macro's name expand.
bool isOpenClName(StringRef Name) {
  static const llvm::StringSet<> Words = {
      // Keywords, types and typedefs that C or C++ does not have.
      "global", "local", "constant", "private", "kernel", "generic",
      "read_only", "write_only", "read_write", "uniform", "pipe", "half",
      "quad", "complex", "imaginary", "bool", "true", "false", "restrict",
      "inline", "asm", "typeof", "vec_step", "uchar", "ushort", "uint", "ulong",
      "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "sampler_t", "event_t",
      "queue_t", "clk_event_t", "ndrange_t", "reserve_id_t", "image1d_t",
      "image1d_array_t", "image1d_buffer_t", "image2d_t", "image2d_array_t",
      "image2d_depth_t", "image2d_array_depth_t", "image2d_msaa_t",
      "image2d_array_msaa_t", "image2d_msaa_depth_t",
      "image2d_array_msaa_depth_t", "image3d_t", "memory_order", "memory_scope",
      "kernel_enqueue_flags_t", "clk_profiling_info",
      // Math, integer, common, geometric and relational functions.
      "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2",
      "atanh", "atanpi", "atan2pi", "cbrt", "ceil", "copysign", "cos", "cosh",
      "cospi", "erfc", "erf", "exp", "exp2", "exp10", "expm1", "fabs", "fdim",
      "floor", "fma", "fmax", "fmin", "fmod", "fract", "frexp", "hypot",
      "ilogb", "ldexp", "lgamma", "lgamma_r", "log", "log2", "log10", "log1p",
      "logb", "mad", "maxmag", "minmag", "modf", "nan", "nextafter", "pow",
      "pown", "powr", "remainder", "remquo", "rint", "rootn", "round", "rsqrt",
      "sin", "sincos", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi",
      "tgamma", "trunc", "abs", "abs_diff", "add_sat", "hadd", "rhadd", "clamp",
      "clz", "ctz", "mad_hi", "mad_sat", "max", "min", "mul_hi", "rotate",
      "sub_sat", "upsample", "popcount", "mad24", "mul24", "bit_reverse",
      "bitfield_extract_signed", "bitfield_extract_unsigned", "bitfield_insert",
      "degrees", "mix", "radians", "step", "smoothstep", "sign", "cross", "dot",
      "distance", "length", "normalize", "fast_distance", "fast_length",
      "fast_normalize", "isequal", "isnotequal", "isgreater", "isgreaterequal",
      "isless", "islessequal", "islessgreater", "isfinite", "isinf", "isnan",
      "isnormal", "isordered", "isunordered", "signbit", "any", "all",
      "bitselect", "select",
      // Synchronization, fences, address spaces, copies, vectors, events,
      // pipes, enqueueing, printf.
      "barrier", "mem_fence", "read_mem_fence", "write_mem_fence", "to_global",
      "to_local", "to_private", "get_fence", "async_work_group_copy",
      "async_work_group_strided_copy", "wait_group_events", "prefetch",
      "shuffle", "shuffle2", "printf", "read_pipe", "write_pipe",
      "reserve_read_pipe", "reserve_write_pipe", "commit_read_pipe",
      "commit_write_pipe", "is_valid_reserve_id", "enqueue_kernel",
      "enqueue_marker", "retain_event", "release_event", "create_user_event",
      "is_valid_event", "set_user_event_status", "capture_event_profiling_info",
      "get_default_queue",
      // Work-item functions.
      "get_work_dim", "get_global_size", "get_global_id", "get_local_size",
      "get_enqueued_local_size", "get_local_id", "get_num_groups",
      "get_group_id", "get_global_offset", "get_global_linear_id",
      "get_local_linear_id", "get_max_sub_group_size", "get_num_sub_groups",
      "get_enqueued_num_sub_groups",
      // Macros.
      "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "SCHAR_MAX", "SCHAR_MIN", "UCHAR_MAX",
      "SHRT_MAX", "SHRT_MIN", "USHRT_MAX", "INT_MAX", "INT_MIN", "UINT_MAX",
      "LONG_MAX", "LONG_MIN", "ULONG_MAX", "MAXFLOAT", "HUGE_VAL", "HUGE_VALF",
      "INFINITY", "NAN", "NULL", "FP_ILOGB0", "FP_ILOGBNAN", "MAX_WORK_DIM",
      "ATOMIC_FLAG_INIT", "ATOMIC_VAR_INIT", "kernel_exec"};
  if (Words.contains(Name))
    return true;
  // Families: conversions, reinterpretations, atomics, vector loads and
  // stores, images, work-group and sub-group functions, vendors'
  // extensions, macros.
  for (StringRef Prefix : {"convert_",      "as_",         "atomic_",
                           "atom_",         "vload",       "vstore",
                           "half_",         "native_",     "read_image",
                           "write_image",   "get_image_",  "get_sub_group_",
                           "get_kernel_",   "get_pipe_",   "work_group_",
                           "sub_group_",    "ndrange_",    "memory_order_",
                           "memory_scope_", "dot_acc_sat", "dot_4x8packed_",
                           "intel_",        "amd_",        "arm_",
                           "clock_read_",   "cl_",         "CL_",
                           "CLK_",          "M_",          "FLT_",
                           "DBL_",          "HALF_"})
    if (Name.starts_with(Prefix))
      return true;
  // Vector types: float4, uint16, ...
  for (StringRef Base : {"char", "uchar", "short", "ushort", "int", "uint",
                         "long", "ulong", "float", "double", "half", "bool"})
    if (Name.consume_front(Base))
      return Name == "2" || Name == "3" || Name == "4" || Name == "8" ||
             Name == "16";
  return false;
}

} // namespace

/// The name a name of the user's gets in the kernel. Generated names start
/// with `fpm_`, the implementation's with `__` or `_` and a capital: such a
/// name gets a `u` before it (and so does every name that is one after
/// `u`s, `ufpm_x` becoming `uufpm_x`). A name OpenCL C gives a meaning gets
/// a `_` after it (and so does every such name followed by `_`s, `max_`
/// becoming `max__`). Two names therefore never meet, nor meet a generated
/// one or OpenCL C's.
std::string kernelIdentifier(StringRef Name) {
  StringRef Bare = Name.ltrim('u');
  if (Bare.starts_with("fpm_") || Bare.starts_with("__") ||
      (Bare.size() > 1 && Bare[0] == '_' && llvm::isUpper(Bare[1])))
    return "u" + Name.str();
  if (isOpenClName(Name.rtrim('_')))
    return Name.str() + "_";
  return Name.str();
}

namespace {

std::string kernelName(const NamedDecl *D) {
  return kernelIdentifier(D->getName());
}

/// How the rewritten code at the loop names VD, a variable of the host that
/// the kernel takes by value. The body may name it with a qualifier
/// (`cfg::scale`, `::scale`, `S::k`) where the plain name means another
/// variable at the loop (a local `scale`): in C++ a variable of a namespace
/// or a class is named from the global namespace. In C, and for a variable
/// of a function or of a template's instantiation, the plain name: there
/// the loop sees what the body sees.
std::string hostName(const VarDecl *VD) {
  std::string Name = VD->getName().str();
  if (!VD->getASTContext().getLangOpts().CPlusPlus ||
      isa<VarTemplateSpecializationDecl>(VD))
    return Name;
  std::string Qualifier;
  for (const DeclContext *DC = VD->getDeclContext(); !DC->isTranslationUnit();
       DC = DC->getParent()) {
    if (DC->isTransparentContext()) // extern "C" { ... }
      continue;
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      // An unnamed namespace's names are its parent's too.
      if (!NS->isAnonymousNamespace())
        Qualifier = NS->getName().str() + "::" + Qualifier;
      continue;
    }
    const auto *RD = dyn_cast<CXXRecordDecl>(DC);
    if (!RD || !RD->getIdentifier() || isa<ClassTemplateSpecializationDecl>(RD))
      return Name;
    Qualifier = RD->getName().str() + "::" + Qualifier;
  }
  return "::" + Qualifier + Name;
}

/// The variable E, an lvalue, is stored in: through members (not `->`),
/// subscripts of arrays (not of pointers) and parentheses; null if none.
const VarDecl *storageOf(const Expr *E) {
  while (true) {
    E = E->IgnoreParenImpCasts();
    if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow()) {
      E = ME->getBase();
    } else if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
      E = ASE->getBase()->IgnoreParenImpCasts();
      if (!E->getType()->isArrayType())
        return nullptr;
    } else if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
      return dyn_cast<VarDecl>(DRE->getDecl());
    } else {
      return nullptr;
    }
  }
}

/// Lines one level in, for a block around them.
std::string indented(StringRef Lines) {
  std::string Inner;
  for (StringRef Line : llvm::split(Lines.rtrim('\n'), '\n'))
    Inner += (Line.empty() ? "" : "  ") + Line.str() + "\n";
  return Inner;
}

/// An array's dimensions below the first: constant extents, or the variable
/// ones' kernel parameters.
struct ArrayShape {
  /// Each inner extent, as the kernel spells it.
  llvm::SmallVector<std::string, 2> Extents;
  QualType Element;
};

/// Where a pointer in the kernel points: the address space of its root.
enum class Space { Global, Private };

/// Thrown by refuse() to end the walk at the first construct the kernel
/// cannot have.
struct Refused {};

class KernelPrinter : public PrinterHelper {
public:
  KernelPrinter(ASTContext &Ctx, const KernelRequest &Request)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Request(Request),
        Policy(Ctx.getLangOpts()) {
    Policy.SuppressTagKeyword = true;
    Policy.Bool = true;
    for (const ClauseArray &A : Request.Arrays)
      ArraysByName.try_emplace(A.Name, &A);
  }

  GeneratedKernel run();
  const std::optional<OffloadRefusal> &refusal() const { return Failure; }

  bool handledStmt(Stmt *S, raw_ostream &OS) override;
  bool print(Stmt *S, raw_ostream &OS);

private:
  /// The function being printed: the kernel (null) or a helper, with the
  /// address spaces of its pointer parameters and the globals it reads
  /// (itself or through the helpers it calls), in order of first use: a
  /// helper takes each as a parameter of its own after the user's, which
  /// its callers pass on from the kernel's.
  struct Scope {
    const FunctionDecl *Fn = nullptr;
    llvm::DenseMap<const ParmVarDecl *, Space> Spaces;
    llvm::SetVector<const VarDecl *> Globals;
    /// Its `T **` parameters, each an array of row pointers packed as a
    /// flat matrix, with the name of its row length's parameter.
    llvm::DenseMap<const VarDecl *, std::string> RowLengths;
  };

  /// Records the first reason the body cannot be a kernel and ends the
  /// walk. The exception never crosses Clang's frames: handledStmt(), which
  /// Clang's printer calls, catches it, and prints nothing more after it.
  [[noreturn]] void refuse(SourceLocation Loc, const Twine &Why) {
    if (!Failure)
      Failure = OffloadRefusal{SM.getExpansionLoc(Loc), Why.str()};
    throw Refused();
  }

  std::optional<std::string> scalarSpelling(QualType C) const;
  std::string type(QualType T, SourceLocation Loc);
  std::string recordType(const RecordDecl *RD, SourceLocation Loc);
  std::string declarator(QualType T, StringRef Name, SourceLocation Loc);
  void noteType(QualType T) {
    if (T->isSpecificBuiltinType(BuiltinType::Double))
      UsesDouble = true;
  }

  void printExpr(const Expr *E, raw_ostream &OS) {
    E->printPretty(OS, this, Policy, 0, "\n", &Ctx);
    if (Failure)
      throw Refused();
  }
  void printValue(const Expr *E, QualType T, raw_ostream &OS);
  void printStmt(const Stmt *S, unsigned Indent, raw_ostream &OS);
  void printBlockOrStmt(const Stmt *S, unsigned Indent, raw_ostream &OS);
  void printDecl(const DeclStmt *DS, raw_ostream &OS);
  void printFunction(const FunctionDecl *FD,
                     const llvm::SmallVector<Space, 2> &Spaces,
                     const std::string &Name);

  void printDeclRef(const DeclRefExpr *DRE, raw_ostream &OS);
  bool printSubscript(const ArraySubscriptExpr *ASE, raw_ostream &OS);
  void printCall(const CallExpr *Call, raw_ostream &OS);
  std::optional<Space> spaceOf(const Expr *Pointer);
  const ClauseArray *clauseArray(const VarDecl *VD) const;
  /// The clause array VD is when its rows are pointers the runtime packs
  /// (ClauseArray::RowPointers), wherever it is printed.
  const ClauseArray *rowPointerArray(const VarDecl *VD) const;
  /// The array of row pointers whose element E is (a row's pointer), or
  /// null: on a device its rows are packed, and such a pointer is no lvalue
  /// there.
  const VarDecl *rowPointerOf(const Expr *E) const;
  /// The buffer and row length a call passes for Arg, an array of row
  /// pointers (the clause's, or the helper's own parameter); none for any
  /// other argument.
  std::optional<std::pair<std::string, std::string>>
  rowPointerArgument(const Expr *Arg);
  /// T points to arrays of constant extents, of elements that are no
  /// pointers (a helper's `double a[5][5]`): a flat pointer in the kernel.
  bool pointsToArrays(QualType T) const;
  const VarDecl *atLoop(const VarDecl *VD) const;
  const ClauseArray *clauseArrayOf(const VarDecl *VD, SourceLocation Loc);
  void checkReachable(const VarDecl *VD, SourceLocation Loc);
  std::optional<std::string> bufferName(const VarDecl *VD, SourceLocation Loc);
  std::string globalArray(const VarDecl *VD, SourceLocation Loc);
  std::string helperGlobal(const VarDecl *VD, SourceLocation Loc);
  std::string passGlobal(const VarDecl *VD, SourceLocation Loc,
                         StringRef Callee);
  void checkWrite(const Expr *Target, SourceLocation Loc);
  bool isMasked(StringRef Array) const {
    return llvm::any_of(Request.Arrays, [&](const ClauseArray &A) {
      return A.Masked && A.Name == Array;
    });
  }
  const VarDecl *maskedRoot(const Expr *Pointer, bool ThroughDeref) const;
  void printMarked(const Expr *Target, const VarDecl *Array, raw_ostream &OS);
  std::string reads(const VarDecl *VD) const;
  std::string scalarName(const VarDecl *VD);
  void checkClauseName(const DeclRefExpr *DRE, const VarDecl *VD);
  bool isReduction(const VarDecl *VD) const {
    return llvm::any_of(Request.Reductions, [&](const KernelReduction &R) {
      return R.Name == VD->getName();
    });
  }
  std::string reductionCode(std::string &Params, std::string &Decls,
                            std::string &Statements);
  bool isInsideLoop(const Decl *D) const;
  ArrayShape shapeOf(const VarDecl *Array, SourceLocation Loc);

  ASTContext &Ctx;
  const SourceManager &SM;
  const KernelRequest &Request;
  PrintingPolicy Policy;
  llvm::StringMap<const ClauseArray *> ArraysByName;

  std::optional<OffloadRefusal> Failure;
  Scope Current;
  unsigned LoopDepth = 0;
  bool UsesDouble = false;
  /// The partitioned loop's own `continue` was printed as `continue;` of a
  /// `do { ... } while (0)` around the body: with reductions, a work-item
  /// must not return before the work-group's reduction.
  bool ContinuesBody = false;

  /// What the kernel's parameters are, in order of first use.
  llvm::SetVector<const VarDecl *> Scalars;
  /// The host's variables the body names with a qualifier (`cfg::scale`),
  /// which a name of the loop's own may hide in the kernel: each gets an
  /// `fpm_v_` name of its own.
  llvm::SmallPtrSet<const VarDecl *, 4> Qualified;
  /// The variables whose storage the body writes into: a struct's member
  /// (`s.v[i] = x`) of one declared outside the loop, which the kernel would
  /// get by value.
  llvm::SmallPtrSet<const VarDecl *, 4> WrittenHostVars;
  llvm::DenseMap<const VarDecl *, std::string> ScalarNames;
  llvm::StringSet<> ScalarNamesTaken;
  llvm::SetVector<const VarDecl *> ArraysUsed;
  /// Global arrays of constant extent that the loop reads and no data clause
  /// names, copied whole (KernelParam::Kind::Whole), and where each is first
  /// read.
  llvm::SetVector<const VarDecl *> WholeArrays;
  llvm::DenseMap<const VarDecl *, SourceLocation> FirstRead;
  /// The kernel's names of the variables the body declares, which may hide a
  /// clause's array where the kernel passes it to a helper.
  llvm::StringSet<> BodyNames;
  /// The globals checkReachable passed.
  llvm::SmallPtrSet<const VarDecl *, 4> Reachable;
  llvm::DenseMap<const VarDecl *, ArrayShape> Shapes;
  std::vector<KernelParam> ExtentParams;
  llvm::SmallVector<std::string, 2> ExtentDecls;
  /// Helper functions: the text of each emitted, in the order OpenCL needs
  /// (callees first), the name of each function with the address spaces of
  /// its pointer parameters, and the ones being printed (recursion).
  std::string Helpers;
  std::map<std::pair<const FunctionDecl *, std::string>, std::string>
      HelperNames;
  llvm::StringSet<> HelperNamesTaken;
  /// The globals each helper emitted takes after its own parameters.
  llvm::StringMap<llvm::SmallVector<const VarDecl *, 2>> HelperGlobals;
  llvm::SmallVector<const FunctionDecl *, 4> HelpersInProgress;
  /// std::min and std::max, as small functions per type.
  std::vector<std::string> Prelude;
  /// The host's structs: the definition and layout check of each, in the
  /// order OpenCL C needs (the structs a struct holds first), and the name
  /// and alignment each has in the kernel.
  std::string Types;
  struct Record {
    std::string Name;
    uint64_t Align = 1;
  };
  llvm::DenseMap<const RecordDecl *, Record> Records;
  llvm::StringSet<> RecordNamesTaken;
};

bool KernelPrinter::isInsideLoop(const Decl *D) const {
  if (Current.Fn)
    return D->getDeclContext() == Current.Fn ||
           D->getDeclContext()->getParent() == Current.Fn;
  SourceLocation Loc = SM.getExpansionLoc(D->getLocation());
  SourceRange R = Request.For->getSourceRange();
  return !SM.isBeforeInTranslationUnit(Loc, SM.getExpansionLoc(R.getBegin())) &&
         !SM.isBeforeInTranslationUnit(
             SM.getExpansionRange(R.getEnd()).getEnd(), Loc);
}

bool KernelPrinter::pointsToArrays(QualType T) const {
  const auto *PT = T->getAs<PointerType>();
  if (!PT || !Ctx.getAsConstantArrayType(PT->getPointeeType()))
    return false;
  QualType Element = PT->getPointeeType();
  while (const ArrayType *AT = Ctx.getAsArrayType(Element)) {
    if (!isa<ConstantArrayType>(AT))
      return false;
    Element = AT->getElementType();
  }
  return !Element->isPointerType();
}

const ClauseArray *KernelPrinter::clauseArray(const VarDecl *VD) const {
  if (Current.Fn || isInsideLoop(VD))
    return nullptr;
  auto It = ArraysByName.find(VD->getName());
  return It == ArraysByName.end() ? nullptr : It->second;
}

const ClauseArray *KernelPrinter::rowPointerArray(const VarDecl *VD) const {
  auto It = ArraysByName.find(VD->getName());
  if (It == ArraysByName.end() || !It->second->RowPointers)
    return nullptr;
  // A template's instantiation keeps the location of its variable.
  const VarDecl *D = It->second->Decl;
  return D && (D == VD || D->getLocation() == VD->getLocation()) ? It->second
                                                                 : nullptr;
}

const VarDecl *KernelPrinter::rowPointerOf(const Expr *E) const {
  const auto *ASE = dyn_cast<ArraySubscriptExpr>(E->IgnoreParens());
  if (!ASE || !ASE->getType()->isPointerType())
    return nullptr;
  const auto *DRE =
      dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && (rowPointerArray(VD) || Current.RowLengths.count(VD)) ? VD
                                                                     : nullptr;
}

/// Whether VD belongs to no function: a file's or a namespace's variable, or
/// a class's static member.
bool isGlobal(const VarDecl *VD) {
  return VD->hasGlobalStorage() && !VD->isLocalVarDecl();
}

/// VD, a global, as the loop sees it: its last declaration outside functions
/// before the loop (a helper may see a later one, which completes an array's
/// type), or VD if none is (which checkReachable refuses). One declaration
/// stands for all.
const VarDecl *KernelPrinter::atLoop(const VarDecl *VD) const {
  SourceLocation ForLoc = SM.getExpansionLoc(Request.For->getBeginLoc());
  const VarDecl *Seen = nullptr;
  for (const VarDecl *R : VD->redecls())
    if (isGlobal(R) &&
        SM.isBeforeInTranslationUnit(SM.getExpansionLoc(R->getLocation()),
                                     ForLoc) &&
        (!Seen ||
         SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Seen->getLocation()),
                                      SM.getExpansionLoc(R->getLocation()))))
      Seen = R;
  return Seen ? Seen : VD;
}

/// How a refusal names a helper's read of VD.
std::string KernelPrinter::reads(const VarDecl *VD) const {
  return (Current.Fn ? "function '" + Current.Fn->getName().str() + "'"
                     : std::string("it")) +
         " reads '" + VD->getQualifiedNameAsString() + "', declared outside it";
}

/// The data clause's array that VD, a global a helper names, is: the one
/// whose name finds VD at the loop. One of the same name that may be another
/// variable keeps the loop on the CPU.
const ClauseArray *KernelPrinter::clauseArrayOf(const VarDecl *VD,
                                                SourceLocation Loc) {
  const ClauseArray *Same = nullptr;
  for (const ClauseArray &A : Request.Arrays) {
    if (A.Decl && A.Decl->getCanonicalDecl() == VD->getCanonicalDecl())
      return &A;
    if (!A.Decl && A.Name == VD->getName())
      Same = &A;
  }
  if (Same)
    refuse(Loc, reads(VD) + ", and the pragma's clauses name a '" + Same->Name +
                    "' that may be another variable");
  return nullptr;
}

/// Refuses a global that a helper reads and that the host cannot pass at the
/// loop as the helper sees it: thread-local or volatile, declared after the
/// loop, hidden there by a name of the loop's function (C, which has no
/// qualifier to name it by), or a class's member that it may not name (C++).
void KernelPrinter::checkReachable(const VarDecl *VD, SourceLocation Loc) {
  if (Reachable.contains(VD))
    return;
  if (VD->getTLSKind() != VarDecl::TLS_None)
    refuse(Loc, reads(VD) + " as thread-local: each CPU thread has its own");
  if (VD->getType().isVolatileQualified())
    refuse(Loc, reads(VD) + " as volatile: a device would read it once, when "
                            "the loop starts");
  SourceLocation ForLoc = SM.getExpansionLoc(Request.For->getBeginLoc());
  if (!SM.isBeforeInTranslationUnit(SM.getExpansionLoc(VD->getLocation()),
                                    ForLoc))
    refuse(Loc, reads(VD) + " after the loop: declare it before the loop's "
                            "function, where the loop passes it to a device");
  if (!Ctx.getLangOpts().CPlusPlus) {
    // The host names it by its plain name at the loop.
    const FunctionDecl *Fn = Request.Fn;
    llvm::SmallVector<DynTypedNode, 4> Up;
    if (!Fn)
      Up.push_back(DynTypedNode::create(*Request.For));
    while (!Fn && !Up.empty()) {
      DynTypedNode N = Up.pop_back_val();
      Fn = N.get<FunctionDecl>();
      llvm::append_range(Up, Ctx.getParents(N));
    }
    if (!Fn)
      refuse(Loc, reads(VD) + ", and fpm cannot find the loop's function");
    const NamedDecl *Hides = nullptr;
    for (const ParmVarDecl *P : Fn->parameters())
      if (P->getName() == VD->getName())
        Hides = P;
    // The declarations in scope at the loop: those before it in each
    // statement around it.
    auto Around = [&](const Stmt *S) {
      return !SM.isBeforeInTranslationUnit(
                 ForLoc, SM.getExpansionLoc(S->getBeginLoc())) &&
             !SM.isBeforeInTranslationUnit(
                 SM.getExpansionRange(S->getEndLoc()).getEnd(), ForLoc);
    };
    for (const Stmt *S = Fn->getBody(); S && S != Request.For;) {
      const Stmt *Next = nullptr;
      for (const Stmt *Child : S->children()) {
        if (!Child)
          continue;
        if (Around(Child)) {
          Next = Child;
          break;
        }
        const auto *DS = dyn_cast<DeclStmt>(Child);
        if (!DS)
          continue;
        for (const Decl *D : DS->decls()) {
          llvm::SmallVector<const NamedDecl *, 4> Names;
          if (const auto *ND = dyn_cast<NamedDecl>(D))
            Names.push_back(ND);
          if (const auto *ED = dyn_cast<EnumDecl>(D))
            llvm::append_range(Names, ED->enumerators());
          for (const NamedDecl *ND : Names)
            if (ND->getDeclName().isIdentifier() &&
                ND->getName() == VD->getName())
              Hides = ND;
        }
      }
      S = Next;
    }
    if (Hides)
      refuse(Loc, reads(VD) + ", which the local '" + Hides->getName() +
                      "' of '" + Fn->getName() +
                      "' hides where the loop passes it to a device: rename "
                      "one of them");
    Reachable.insert(VD);
    return;
  }
  if (!StringRef(hostName(VD)).starts_with("::"))
    refuse(Loc, reads(VD) + ", which fpm cannot name where the loop passes "
                            "it to a device");
  for (const Decl *D = VD; D; D = dyn_cast<CXXRecordDecl>(D->getDeclContext()))
    if (D->getAccess() != AS_none && D->getAccess() != AS_public)
      refuse(Loc, reads(VD) + ", a member that the loop may not name where it "
                              "passes it to a device");
  Reachable.insert(VD);
}

/// A global that the helper being printed reads: it takes it as a
/// parameter of its own, named so that none of the user's names hides it
/// (`fpm_v_`, as the kernel names it).
std::string KernelPrinter::helperGlobal(const VarDecl *VD, SourceLocation Loc) {
  Current.Globals.insert(VD);
  std::string Name = scalarName(VD);
  if (!StringRef(Name).starts_with("fpm_v_"))
    refuse(Loc, reads(VD) + ", which fpm found no name for in the kernel");
  return Name;
}

/// The name of the buffer that holds VD, a global array or pointer, where it
/// is printed: the kernel's clause array, a helper's parameter, or the whole
/// array's copy (an error at Loc for a pointer or an array of unknown
/// extent that no clause names: fpm cannot tell what to copy).
std::string KernelPrinter::globalArray(const VarDecl *VD, SourceLocation Loc) {
  if (Current.Fn && rowPointerArray(VD))
    refuse(Loc, "function '" + Current.Fn->getName() + "' reads '" +
                    VD->getName() +
                    "', an array of row pointers, by its name: a device "
                    "packs its rows, and a function gets them only as an "
                    "argument (a `T **` parameter)");
  if (Current.Fn && clauseArrayOf(VD, Loc))
    return helperGlobal(VD, Loc); // the clause names it at the loop
  const ConstantArrayType *Whole = Ctx.getAsConstantArrayType(VD->getType());
  if (Whole && Whole->getSize() == 0)
    refuse(Loc, reads(VD) + ", an array of no element");
  if (!Whole) {
    if (!Current.Fn)
      refuse(Loc, "it uses the array '" + VD->getName() +
                      "', which no data clause names (add it to in(...), "
                      "out(...) or inout(...))");
    refuse(Loc, reads(VD) + ", a " +
                    (VD->getType()->isPointerType() ? "pointer"
                                                    : "array of unknown size") +
                    " whose elements fpm cannot copy to a device without "
                    "their number: add in(" +
                    VD->getName() + "[0:n]) to the pragma, n the number of " +
                    "elements it reads");
  }
  if (Current.Fn) {
    checkReachable(VD, Loc);
  } else if (VD->getTLSKind() != VarDecl::TLS_None ||
             VD->getType().isVolatileQualified()) {
    refuse(Loc, "it reads the " +
                    std::string(VD->getType().isVolatileQualified()
                                    ? "volatile"
                                    : "thread-local") +
                    " array '" + VD->getName() +
                    "', which no data clause names");
  }
  shapeOf(VD, Loc);
  FirstRead.try_emplace(VD, SM.getExpansionLoc(Loc));
  if (Current.Fn)
    return helperGlobal(VD, Loc);
  WholeArrays.insert(VD);
  return scalarName(VD);
}

/// The buffer VD names where it is printed, if it names one: an array of
/// the data clauses (in the kernel), or a global array or pointer. None for
/// the body's own arrays and private ones.
std::optional<std::string> KernelPrinter::bufferName(const VarDecl *VD,
                                                     SourceLocation Loc) {
  QualType T = VD->getType().getNonReferenceType();
  if (!T->isArrayType() && !T->isPointerType())
    return std::nullopt;
  if (!Current.Fn) {
    if (VD == Request.Var || isInsideLoop(VD) ||
        llvm::is_contained(Request.Private, VD->getName()) || isReduction(VD))
      return std::nullopt;
    if (clauseArray(VD)) {
      ArraysUsed.insert(VD);
      return kernelName(VD);
    }
  } else if (isInsideLoop(VD) ||
             (isa<ParmVarDecl>(VD) && VD->getDeclContext() == Current.Fn)) {
    return std::nullopt;
  }
  if (!isGlobal(VD))
    return std::nullopt;
  return globalArray(atLoop(VD), Loc);
}

/// What a call passes for VD, a global its callee takes as a parameter of
/// its own: the caller's parameter in a helper; in the kernel, the clause's
/// array, the whole array's copy or the scalar's value.
std::string KernelPrinter::passGlobal(const VarDecl *VD, SourceLocation Loc,
                                      StringRef Callee) {
  if (Current.Fn) {
    Current.Globals.insert(VD);
    return scalarName(VD);
  }
  QualType T = VD->getType().getNonReferenceType();
  if (!T->isArrayType() && !T->isPointerType()) {
    Scalars.insert(VD);
    return scalarName(VD);
  }
  if (clauseArrayOf(VD, Loc)) {
    if (BodyNames.contains(kernelName(VD)))
      refuse(Loc, "it declares a '" + VD->getName() + "', which hides the '" +
                      VD->getName() + "' of its data clauses where it calls '" +
                      Callee + "', which reads it: rename it");
    ArraysUsed.insert(VD);
    return kernelName(VD);
  }
  WholeArrays.insert(VD);
  return scalarName(VD);
}

/// The name an lvalue or a pointer is rooted in, through subscripts,
/// members, `&`, pointer arithmetic and, with ThroughDeref, `*`: the
/// variable a write reaches (`*p` writes what p points into) or whose
/// address space a pointer has (where `*pp` is another pointer's); null
/// when it is none.
static const DeclRefExpr *rootRef(const Expr *E, bool ThroughDeref) {
  E = E->IgnoreParenImpCasts();
  while (true) {
    if (const auto *UO = dyn_cast<UnaryOperator>(E);
        UO && (UO->getOpcode() == UO_AddrOf ||
               (ThroughDeref && UO->getOpcode() == UO_Deref)))
      E = UO->getSubExpr()->IgnoreParenImpCasts();
    else if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
      E = ASE->getBase()->IgnoreParenImpCasts();
    else if (const auto *ME = dyn_cast<MemberExpr>(E))
      E = ME->getBase()->IgnoreParenImpCasts();
    else if (const auto *BO = dyn_cast<BinaryOperator>(E);
             BO && BO->isAdditiveOp())
      E = (BO->getLHS()->getType()->isPointerType() ? BO->getLHS()
                                                    : BO->getRHS())
              ->IgnoreParenImpCasts();
    else
      return dyn_cast<DeclRefExpr>(E);
  }
}

/// Refuses a write to a global that the kernel gets by value or as an input
/// only: in a helper, any global (iterations on different PEs would race
/// on it, and no device's copy comes back); in the body, an array no data
/// clause names. The body's writes to shared scalars are LoopChecker's.
void KernelPrinter::checkWrite(const Expr *Target, SourceLocation Loc) {
  const auto *DRE = rootRef(Target, /*ThroughDeref=*/true);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || !isGlobal(VD))
    return;
  Loc = DRE->getLocation();
  if (Current.Fn)
    refuse(Loc, "function '" + Current.Fn->getName() + "' writes '" +
                    VD->getQualifiedNameAsString() +
                    "', declared outside it: a global that iterations on "
                    "different PEs would write, and that fpm does not copy "
                    "back from a device");
  if (!clauseArray(VD) && !llvm::is_contained(Request.Private, VD->getName()) &&
      !isReduction(VD) && VD->getType()->isArrayType())
    refuse(Loc, "it writes the array '" + VD->getName() +
                    "', which no data clause names (add it to out(...) or "
                    "inout(...))");
}

/// The array of a data clause whose writes a device merges through a write
/// mask (ClauseArray::Masked) that Pointer, in the body, is rooted in; null
/// for any other, and in a helper, which reaches such an array only through
/// a parameter to const (printCall) or as a global it may not write.
const VarDecl *KernelPrinter::maskedRoot(const Expr *Pointer,
                                         bool ThroughDeref) const {
  if (Current.Fn)
    return nullptr;
  const auto *DRE = rootRef(Pointer, ThroughDeref);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && clauseArray(VD) && isMasked(VD->getName()) ? VD : nullptr;
}

/// Target, a write to an element of Array, a masked array, as the element
/// marked in the array's mask: `(*fpm_mark_a(&(a[k]), fpm_mask_a, a))`, an
/// lvalue for every assignment, compound assignment, `++` and `--`. The
/// mask marks whole elements, so that a write to part of one (a member of
/// a struct element) is refused: another PE may write the rest of it.
void KernelPrinter::printMarked(const Expr *Target, const VarDecl *Array,
                                raw_ostream &OS) {
  const Expr *Element = Target->IgnoreParens();
  const auto *Deref = dyn_cast<UnaryOperator>(Element);
  ArrayShape Shape = shapeOf(Array, Target->getExprLoc());
  if ((!isa<ArraySubscriptExpr>(Element) &&
       (!Deref || Deref->getOpcode() != UO_Deref)) ||
      !Ctx.hasSameUnqualifiedType(Element->getType(), Shape.Element))
    refuse(Target->getExprLoc(),
           "it writes part of an element of '" + Array->getName() +
               "', whose writes a device merges through a write mask that "
               "marks whole elements, and another PE may write the rest of "
               "the element (assign the element whole)");
  std::string Name = kernelName(Array);
  OS << "(*fpm_mark_" << Name << "(&(";
  printExpr(Target, OS);
  OS << "), fpm_mask_" << Name << ", " << Name << "))";
}

/// The kernel's name of the host's variable VD: its own, or for one the body
/// names with a qualifier `fpm_v_<name>`, numbered from `_2` when two share
/// a name (`a::s`, `b::s`).
std::string KernelPrinter::scalarName(const VarDecl *VD) {
  auto [It, New] = ScalarNames.try_emplace(VD);
  if (New) {
    std::string Base = kernelName(VD);
    if (Qualified.contains(VD)) {
      Base = "fpm_v_" + Base;
      It->second = Base;
      for (unsigned K = 2; !ScalarNamesTaken.insert(It->second).second; ++K)
        It->second = Base + "_" + std::to_string(K);
    } else {
      It->second = Base;
    }
  }
  return It->second;
}

/// The clauses name arrays and variables as the loop sees them, by their
/// plain names; with a qualifier (`cfg::x`) the body may name another of
/// the same name, which fpm cannot tell from the clause's.
void KernelPrinter::checkClauseName(const DeclRefExpr *DRE, const VarDecl *VD) {
  if (!DRE->hasQualifier() || Current.Fn || VD == Request.Var ||
      isInsideLoop(VD))
    return;
  if (ArraysByName.count(VD->getName()) ||
      llvm::is_contained(Request.Private, VD->getName()) || isReduction(VD))
    refuse(DRE->getLocation(),
           "it names '" + VD->getQualifiedNameAsString() +
               "' with a qualifier, and the pragma's clauses name a '" +
               VD->getName() +
               "' that may be another variable: name it as the clauses do");
}

/// How OpenCL C spells C, a canonical arithmetic type of the host's without
/// qualifiers: the same width and signedness (a 32-bit `long` has no
/// spelling); none for a type OpenCL C lacks.
std::optional<std::string> KernelPrinter::scalarSpelling(QualType C) const {
  const auto *BT = C->getAs<BuiltinType>();
  if (!BT)
    return std::nullopt;
  switch (BT->getKind()) {
  case BuiltinType::Bool:
    return "bool";
  case BuiltinType::Char_S:
  case BuiltinType::SChar:
    return "char";
  case BuiltinType::Char_U:
  case BuiltinType::UChar:
    return "uchar";
  case BuiltinType::Short:
    return "short";
  case BuiltinType::UShort:
    return "ushort";
  case BuiltinType::Int:
    return "int";
  case BuiltinType::UInt:
    return "uint";
  case BuiltinType::Long:
  case BuiltinType::LongLong:
    if (Ctx.getTypeSize(C) == 64)
      return "long";
    break;
  case BuiltinType::ULong:
  case BuiltinType::ULongLong:
    if (Ctx.getTypeSize(C) == 64)
      return "ulong";
    break;
  case BuiltinType::Float:
    return "float";
  case BuiltinType::Double:
    return "double";
  default:
    break;
  }
  return std::nullopt;
}

std::string KernelPrinter::type(QualType T, SourceLocation Loc) {
  QualType C = T.getCanonicalType();
  std::string Quals = C.isConstQualified() ? "const " : "";
  if (const auto *ET = C->getAs<EnumType>())
    C = ET->getDecl()->getIntegerType().getCanonicalType();
  noteType(C);
  if (std::optional<std::string> Spelling = scalarSpelling(C))
    return Quals + *Spelling;
  if (C->isPointerType())
    refuse(Loc, "it uses a pointer that is not an array of a data clause");
  if (const auto *RT = C->getAs<RecordType>())
    return Quals + recordType(RT->getDecl(), Loc);
  refuse(Loc, "OpenCL C has no type '" + T.getAsString(Policy) + "'");
}

/// The kernel's name of RD, a struct of the host's (or a C++ class that is
/// a standard-layout, trivially copyable aggregate without bases), emitted
/// the first time with the members OpenCL C can hold (arithmetic types,
/// structs, arrays of constant size of them) under their kernel names. A
/// kernel's struct must have the host's layout: OpenCL C aligns each
/// member to its size, so a host layout that does not (a packed struct, an
/// aligned member, a target that aligns double to 4) is refused here, and a
/// device whose compiler lays it out otherwise fails to build the kernel
/// (its `fpm_check_` type has a negative size) and drops out, rather than
/// read the host's bytes as other members.
std::string KernelPrinter::recordType(const RecordDecl *RD,
                                      SourceLocation Loc) {
  const RecordDecl *Def = RD->getDefinition();
  std::string Named = RD->getKindName().str() + " '" +
                      Ctx.getRecordType(RD).getAsString(Policy) + "'";
  if (!Def)
    refuse(Loc, "it uses the incomplete " + Named);
  if (auto It = Records.find(Def); It != Records.end())
    return It->second.Name;
  if (Def->isUnion())
    refuse(Loc, "it uses the " + Named +
                    ", and fpm offloads no unions (use a struct)");
  auto Refuse = [&](const Twine &Why) {
    refuse(Loc, "it uses the " + Named + ", " + Why);
  };
  if (const auto *Class = dyn_cast<CXXRecordDecl>(Def)) {
    if (Class->getNumBases() > 0)
      Refuse("which has a base class: fpm offloads structs of data members");
    if (Class->isPolymorphic())
      Refuse("which has virtual functions");
    for (const FieldDecl *F : Def->fields())
      if (F->getAccess() != AS_public)
        Refuse("whose member '" + F->getName() + "' is not public");
    if (!Class->isAggregate() || !Class->isTriviallyCopyable() ||
        !Class->isStandardLayout())
      Refuse("which is not a plain aggregate (it has a constructor, a "
             "copy, an assignment or a destructor of its own)");
  }
  StringRef Name = Def->getName();
  if (Name.empty())
    if (const TypedefNameDecl *TD = Def->getTypedefNameForAnonDecl())
      Name = TD->getName();
  if (Name.empty())
    Refuse("which has no name: give it a tag or a typedef name");
  std::string Emitted = "fpm_t_" + Name.str();
  for (unsigned K = 2; RecordNamesTaken.contains(Emitted); ++K)
    Emitted = "fpm_t_" + Name.str() + "_" + std::to_string(K);
  RecordNamesTaken.insert(Emitted); // before the structs it holds take one

  // The members, each at the offset OpenCL C gives it, checked against the
  // host's.
  const ASTRecordLayout &Layout = Ctx.getASTRecordLayout(Def);
  std::string Members, Checks;
  uint64_t Offset = 0, Align = 1;
  for (const FieldDecl *F : Def->fields()) {
    std::string Member = "whose member '" + F->getName().str() + "'";
    if (!F->getIdentifier())
      Refuse("which has an unnamed member: name it");
    if (F->isBitField())
      Refuse(Member + " is a bit-field, whose layout each compiler chooses "
                      "(make it a plain integer)");
    QualType T = F->getType();
    std::string Dims;
    uint64_t Count = 1;
    while (const ArrayType *AT = Ctx.getAsArrayType(T)) {
      const auto *CAT = dyn_cast<ConstantArrayType>(AT);
      if (!CAT)
        Refuse(Member + " is an array of no constant size");
      Dims += "[" + std::to_string(CAT->getSize().getZExtValue()) + "]";
      Count *= CAT->getSize().getZExtValue();
      T = AT->getElementType();
    }
    QualType C = T.getCanonicalType().getUnqualifiedType();
    if (const auto *ET = C->getAs<EnumType>())
      C = ET->getDecl()->getIntegerType().getCanonicalType();
    std::string Spelling;
    uint64_t Size = 0, MemberAlign = 0;
    if (C->isBooleanType())
      Refuse(Member + " is a bool, whose size OpenCL C leaves to the "
                      "device (make it a char)");
    if (C->isSpecificBuiltinType(BuiltinType::LongDouble))
      Refuse(Member + " is a long double, which OpenCL C does not have");
    if (C->isPointerType() || C->isMemberPointerType() || C->isReferenceType())
      Refuse(Member + " is a pointer, which a device cannot follow (give "
                      "what it points to a data clause of its own)");
    if (C->isUnionType())
      Refuse(Member + " is a union, and fpm offloads no unions");
    if (const auto *RT = C->getAs<RecordType>()) {
      Spelling = recordType(RT->getDecl(), Loc);
      Size = Ctx.getTypeSizeInChars(C).getQuantity();
      MemberAlign = Records.find(RT->getDecl()->getDefinition())->second.Align;
    } else if (std::optional<std::string> S = scalarSpelling(C)) {
      noteType(C);
      Spelling = *S;
      Size = MemberAlign = Ctx.getTypeSizeInChars(C).getQuantity();
    } else {
      Refuse(Member + " has the type '" + T.getAsString(Policy) +
             "', which OpenCL C does not have");
    }
    Offset = llvm::alignTo(Offset, MemberAlign);
    uint64_t HostOffset =
        Ctx.toCharUnitsFromBits(Layout.getFieldOffset(F->getFieldIndex()))
            .getQuantity();
    if (HostOffset != Offset)
      Refuse(Member + " is at byte " + Twine(HostOffset) +
             " on the host and would be at byte " + Twine(Offset) +
             " in OpenCL C, which aligns each member to its size (a packed "
             "or aligned struct, or a target's own alignment)");
    std::string Field = kernelIdentifier(F->getName());
    Members += "  " + Spelling + " " + Field + Dims + ";\n";
    if (F->getFieldIndex() > 0)
      Checks += " && __builtin_offsetof(" + Emitted + ", " + Field +
                ") == " + std::to_string(HostOffset);
    Offset += Size * Count;
    Align = std::max(Align, MemberAlign);
  }
  if (Members.empty())
    Refuse("which has no member");
  uint64_t HostSize = Layout.getSize().getQuantity();
  if (llvm::alignTo(Offset, Align) != HostSize)
    Refuse("whose size is " + Twine(HostSize) +
           " bytes on the host and would be " +
           Twine(llvm::alignTo(Offset, Align)) +
           " in OpenCL C, which aligns each member to its size (a packed "
           "or aligned struct, or a target's own alignment)");

  Records[Def] = {Emitted, Align};
  std::string Qualified;
  llvm::raw_string_ostream QOS(Qualified);
  Def->getNameForDiagnostic(QOS, Policy, /*Qualified=*/true);
  if (Qualified != Name)
    Types += "/* " + llvm::join(llvm::split(Qualified, "*/"), "* /") + " */\n";
  Types += "typedef struct {\n" + Members + "} " + Emitted + ";\n";
  Types += "typedef char fpm_check_" + Emitted.substr(6) + "[sizeof(" +
           Emitted + ") == " + std::to_string(HostSize) + Checks +
           " ? 1 : -1];\n";
  return Emitted;
}

std::string KernelPrinter::declarator(QualType T, StringRef Name,
                                      SourceLocation Loc) {
  std::string Dims;
  while (const ArrayType *AT = Ctx.getAsArrayType(T)) {
    const auto *CAT = dyn_cast<ConstantArrayType>(AT);
    if (!CAT)
      refuse(Loc, "it declares an array of variable size");
    Dims += "[" + std::to_string(CAT->getSize().getZExtValue()) + "]";
    T = AT->getElementType();
  }
  if (T->isReferenceType())
    refuse(Loc, "it declares a C++ reference");
  return type(T, Loc) + " " + Name.str() + Dims;
}

ArrayShape KernelPrinter::shapeOf(const VarDecl *Array, SourceLocation Loc) {
  auto [It, New] = Shapes.try_emplace(Array);
  if (!New)
    return It->second;
  ArrayShape Shape;
  QualType T = Array->getType().getNonReferenceType();
  if (const auto *PT = T->getAs<PointerType>())
    T = PT->getPointeeType();
  else if (const ArrayType *AT = Ctx.getAsArrayType(T))
    T = AT->getElementType();
  else
    refuse(Loc, "'" + Array->getName() + "' is neither an array nor a pointer");
  unsigned Dim = 1;
  while (const ArrayType *AT = Ctx.getAsArrayType(T)) {
    if (const auto *CAT = dyn_cast<ConstantArrayType>(AT)) {
      Shape.Extents.push_back(std::to_string(CAT->getSize().getZExtValue()));
    } else if (isa<VariableArrayType>(AT)) {
      // The host measures the extent as the C outliner does.
      std::string Param =
          "fpm_d" + std::to_string(Dim) + "_" + kernelName(Array);
      std::string Zeros;
      for (unsigned I = 0; I < Dim; ++I)
        Zeros += "[0]";
      KernelParam P;
      P.K = KernelParam::Kind::Extent;
      P.Name = Param;
      P.HostExpr = "(sizeof(" + Array->getName().str() + Zeros + ") / sizeof(" +
                   Array->getName().str() + Zeros + "[0]))";
      ExtentParams.push_back(P);
      ExtentDecls.push_back("const long " + Param);
      Shape.Extents.push_back(Param);
    } else {
      refuse(Loc,
             "'" + Array->getName() + "' has an array type of unknown size");
    }
    T = AT->getElementType();
    ++Dim;
  }
  // Rows through their pointers, packed by the runtime a row's length
  // apart (fpm_arg::row_length): a flat matrix, as above.
  if (T->isPointerType() && Shape.Extents.empty()) {
    std::string Length;
    if (auto It = Current.RowLengths.find(Array);
        It != Current.RowLengths.end()) {
      Length = It->second;
    } else if (const ClauseArray *Rows = rowPointerArray(Array)) {
      Length = "fpm_rowlen_" + kernelName(Array);
      KernelParam P;
      P.K = KernelParam::Kind::RowLength;
      P.Name = Length;
      P.Section = Rows->Index;
      ExtentParams.push_back(P);
      ExtentDecls.push_back("const long " + Length);
    }
    if (!Length.empty()) {
      Shape.Extents.push_back(Length);
      T = T->getPointeeType();
    }
  }
  if (T->isPointerType() || T->isArrayType())
    refuse(Loc, "'" + Array->getName() +
                    "' is an array of pointers: its rows are not one buffer");
  Shape.Element = T;
  type(T, Loc); // refuses what OpenCL C cannot hold
  It = Shapes.find(Array);
  It->second = Shape;
  return Shape;
}

void KernelPrinter::printDeclRef(const DeclRefExpr *DRE, raw_ostream &OS) {
  const ValueDecl *D = DRE->getDecl();
  SourceLocation Loc = DRE->getLocation();
  if (const auto *EC = dyn_cast<EnumConstantDecl>(D)) {
    OS << toString(EC->getInitVal(), 10);
    return;
  }
  const auto *VD = dyn_cast<VarDecl>(D);
  if (!VD)
    refuse(Loc, "it uses '" + D->getName() + "', which is not a variable");
  if (Current.RowLengths.count(VD))
    refuse(Loc, "function '" + Current.Fn->getName() + "' uses '" +
                    VD->getName() +
                    "', an array of row pointers, other than through "
                    "subscripts or as an argument: a device has its rows "
                    "packed, not their pointers");
  if (VD == Request.Var || isInsideLoop(VD) ||
      (Current.Fn && isa<ParmVarDecl>(VD) &&
       VD->getDeclContext() == Current.Fn)) {
    OS << kernelName(VD);
    return;
  }
  if (Current.Fn) {
    // An integer constant is its value.
    Expr::EvalResult R;
    if (VD->getType().isConstQualified() && VD->getInit() &&
        VD->getType()->isIntegerType() &&
        VD->getInit()->EvaluateAsInt(R, Ctx)) {
      OS << toString(R.Val.getInt(), 10);
      return;
    }
    // Any other global comes as a parameter of the helper's own.
    if (!isGlobal(VD))
      refuse(Loc, "function '" + Current.Fn->getName() + "' uses '" +
                      VD->getName() + "', declared outside it");
  }
  if (!Current.Fn)
    checkClauseName(DRE, VD);
  if (!Current.Fn &&
      (llvm::is_contained(Request.Private, VD->getName()) || isReduction(VD))) {
    OS << kernelName(VD);
    return;
  }
  if (!Current.Fn && clauseArray(VD)) {
    QualType T = VD->getType().getNonReferenceType();
    if (!T->isPointerType() && !T->isArrayType())
      refuse(Loc, "'" + VD->getName() + "' in a data clause is not an array");
  }
  if (isGlobal(VD))
    VD = atLoop(VD);
  if (std::optional<std::string> Buffer = bufferName(VD, Loc)) {
    if (!shapeOf(VD, Loc).Extents.empty())
      refuse(Loc, "'" + VD->getName() +
                      "' has several dimensions and is used other than "
                      "through subscripts");
    OS << *Buffer;
    return;
  }
  QualType T = VD->getType().getNonReferenceType();
  if (T->isPointerType() || T->isArrayType())
    refuse(Loc, "it uses the array '" + VD->getName() +
                    "', which no data clause names (add it to in(...), "
                    "out(...) or inout(...))");
  type(T, Loc);
  if (Current.Fn) {
    checkReachable(VD, Loc);
    OS << helperGlobal(VD, Loc);
    return;
  }
  if (WrittenHostVars.contains(VD))
    refuse(Loc, "it writes into '" + VD->getName() +
                    "', declared outside the loop, which a device gets as a "
                    "copy: the writes would not reach the host (keep what "
                    "the loop writes in an array of a data clause)");
  Scalars.insert(VD);
  OS << scalarName(VD);
}

bool KernelPrinter::printSubscript(const ArraySubscriptExpr *ASE,
                                   raw_ostream &OS) {
  // A[e1][e2]...: the chain down to a clause array of several dimensions.
  llvm::SmallVector<const Expr *, 3> Indices;
  const Expr *Base = ASE;
  while (const auto *A =
             dyn_cast<ArraySubscriptExpr>(Base->IgnoreParenImpCasts())) {
    Indices.insert(Indices.begin(), A->getIdx());
    Base = A->getBase();
  }
  const auto *DRE = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts());
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD || VD == Request.Var)
    return false;
  // A helper's parameter that points to arrays (`double a[5][5]`) is a flat
  // pointer in the kernel, indexed as the clause arrays are.
  const auto *Param = dyn_cast<ParmVarDecl>(VD);
  bool FlatParam =
      Param && Current.Fn && Param->getDeclContext() == Current.Fn &&
      (pointsToArrays(Param->getType()) || Current.RowLengths.count(Param));
  if (!Current.Fn) {
    if (!clauseArray(VD) && !isGlobal(VD))
      return false;
    checkClauseName(DRE, VD);
  }
  if (isGlobal(VD))
    VD = atLoop(VD);
  std::optional<std::string> Buffer = FlatParam
                                          ? std::optional(kernelName(VD))
                                          : bufferName(VD, DRE->getLocation());
  if (!Buffer)
    return false;
  ArrayShape Shape = shapeOf(VD, DRE->getLocation());
  if (Shape.Extents.empty())
    return false; // A[i] as written
  if (Indices.size() > Shape.Extents.size() + 1)
    refuse(ASE->getExprLoc(),
           "it subscripts '" + VD->getName() + "' past its element type");
  // The flat index: ((e1 * D1 + e2) * D2 + e3) ..., as C lays rows out.
  auto Operand = [](std::string Text) {
    bool Simple =
        llvm::all_of(Text, [](char C) { return llvm::isAlnum(C) || C == '_'; });
    return Simple ? Text : "(" + Text + ")";
  };
  std::string Index;
  for (size_t I = 0; I < Indices.size(); ++I) {
    std::string Sub;
    llvm::raw_string_ostream SS(Sub);
    printExpr(Indices[I], SS);
    Index = I == 0 ? Operand(Sub)
                   : Operand(Index) + " * " + Shape.Extents[I - 1] + " + " +
                         Operand(Sub);
  }
  size_t Rest = Shape.Extents.size() + 1 - Indices.size();
  if (Rest == 0) {
    OS << *Buffer << "[" << Index << "]";
    return true;
  }
  // A row, or a block of rows (`a[i]` of a `double a[n][5][5]`): a pointer
  // to its first element, for a helper's parameter.
  std::string Elements;
  for (size_t I = Indices.size() - 1; I < Shape.Extents.size(); ++I)
    Elements += " * " + Shape.Extents[I];
  OS << "(" << *Buffer << " + " << Operand(Index) << Elements << ")";
  return true;
}

std::optional<std::pair<std::string, std::string>>
KernelPrinter::rowPointerArgument(const Expr *Arg) {
  const auto *DRE = dyn_cast<DeclRefExpr>(Arg->IgnoreParenImpCasts());
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD)
    return std::nullopt;
  if (Current.Fn) {
    auto It = Current.RowLengths.find(VD);
    if (It == Current.RowLengths.end())
      return std::nullopt;
    return std::pair(kernelName(VD), It->second);
  }
  if (!clauseArray(VD) || !rowPointerArray(VD))
    return std::nullopt;
  std::optional<std::string> Buffer = bufferName(VD, DRE->getLocation());
  if (!Buffer)
    return std::nullopt;
  return std::pair(*Buffer, shapeOf(VD, DRE->getLocation()).Extents.front());
}

std::optional<Space> KernelPrinter::spaceOf(const Expr *Pointer) {
  const auto *DRE = rootRef(Pointer, /*ThroughDeref=*/false);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!VD)
    return std::nullopt;
  if (const auto *PVD = dyn_cast<ParmVarDecl>(VD); PVD && Current.Fn) {
    auto It = Current.Spaces.find(PVD);
    if (It != Current.Spaces.end())
      return It->second;
  }
  if (clauseArray(VD))
    return Space::Global;
  bool Aggregate =
      VD->getType()->isArrayType() || VD->getType()->isRecordType();
  if (isInsideLoop(VD) && Aggregate)
    return Space::Private;
  if (!Current.Fn && llvm::is_contained(Request.Private, VD->getName()) &&
      Aggregate)
    return Space::Private;
  // A global's buffer (bufferName says which, as the argument is printed).
  if (isGlobal(VD) &&
      (VD->getType()->isArrayType() || VD->getType()->isPointerType()))
    return Space::Global;
  return std::nullopt;
}

void KernelPrinter::printCall(const CallExpr *Call, raw_ostream &OS) {
  const FunctionDecl *FD = Call->getDirectCallee();
  SourceLocation Loc = Call->getExprLoc();
  if (!FD)
    refuse(Loc, "it calls a function through a pointer");
  if (!FD->getDeclName().isIdentifier())
    refuse(Loc, "it calls the C++ operator '" + FD->getNameAsString() + "'");
  std::string Name = FD->getNameAsString();
  // Prints the arguments, each converted to the type ParamType(I) gives
  // (none: as written) where Clang converts it: OpenCL C's overloads and
  // conversions are not C's and C++'s.
  // Arrays of row pointers passed to `T **` parameters: their packed rows
  // and their row length, two arguments each.
  llvm::SmallDenseMap<unsigned, std::pair<std::string, std::string>> RowArgs;
  auto PrintArgs = [&](llvm::function_ref<QualType(unsigned)> ParamType,
                       ArrayRef<std::string> Extra = {}) {
    OS << "(";
    for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
      if (I > 0)
        OS << ", ";
      if (auto It = RowArgs.find(I); It != RowArgs.end()) {
        OS << It->second.first << ", " << It->second.second;
        continue;
      }
      const Expr *Arg = Call->getArg(I);
      if (const auto *Default = dyn_cast<CXXDefaultArgExpr>(Arg)) {
        // Written at the callee, where a variable's name may not mean what
        // it means in the kernel: literals and constants only.
        Arg = Default->getExpr();
        std::function<bool(const Stmt *)> ReadsVariable = [&](const Stmt *S) {
          if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(S);
              DRE && isa<VarDecl>(DRE->getDecl()))
            return true;
          return S && llvm::any_of(S->children(), ReadsVariable);
        };
        if (ReadsVariable(Arg))
          refuse(Loc, "it calls '" + Name +
                          "' with a default argument that reads a variable");
      }
      QualType Param = ParamType(I);
      if (!Param.isNull() && Param->isArithmeticType() &&
          !Ctx.hasSameUnqualifiedType(
              Arg->IgnoreParenImpCasts()->getType().getNonReferenceType(),
              Param)) {
        OS << "(" << type(Param.getUnqualifiedType(), Loc) << ")(";
        printExpr(Arg, OS);
        OS << ")";
      } else {
        printValue(Arg, Param, OS);
      }
    }
    for (size_t I = 0; I < Extra.size(); ++I)
      OS << (Call->getNumArgs() + I > 0 ? ", " : "") << Extra[I];
    OS << ")";
  };
  // The type a C math function takes: the result's for the floating-point
  // ones (all of whose arguments have it; C++'s std::pow(double, int)
  // computes in double too), the parameter's for the integer ones.
  auto CParamType = [&](unsigned I) {
    return Call->getType()->isRealFloatingType() ? Call->getType()
           : I < FD->getNumParams()
               ? FD->getParamDecl(I)->getType().getNonReferenceType()
               : QualType();
  };

  const FunctionDecl *Def = nullptr;
  bool InSystemHeader =
      SM.isInSystemHeader(SM.getExpansionLoc(FD->getLocation()));
  if (!InSystemHeader && FD->hasBody(Def)) {
    if (const auto *Method = dyn_cast<CXXMethodDecl>(Def);
        Method && !Method->isStatic())
      refuse(Loc, "it calls the member function '" + Name + "'");
    if (isa<MemberExpr>(Call->getCallee()->IgnoreParenImpCasts()))
      refuse(Loc, "it calls the static member function '" + Name +
                      "' through an object");
    if (Def->isVariadic())
      refuse(Loc, "it calls the variadic function '" + Name + "'");
    // The address space of each pointer parameter is its argument's.
    llvm::SmallVector<Space, 2> Spaces;
    std::string Signature;
    for (unsigned I = 0; I < Def->getNumParams(); ++I) {
      const ParmVarDecl *Param = Def->getParamDecl(I);
      if (!Param->getType()->isPointerType())
        continue;
      // A `T **` parameter takes an array of row pointers whole, and only
      // that: the kernel has its rows packed, a row's length apart.
      std::optional<std::pair<std::string, std::string>> Rows =
          I < Call->getNumArgs() ? rowPointerArgument(Call->getArg(I))
                                 : std::nullopt;
      bool RowsParam = Param->getType()->getPointeeType()->isPointerType();
      if (RowsParam && !Rows)
        refuse(Call->getArg(I)->getExprLoc(),
               "it passes '" + Name + "' a pointer to pointers ('" +
                   Param->getName() +
                   "') that is not an array of row pointers of a data "
                   "clause, whole (`rows` of `in(rows[i:1][0:m])`)");
      if (Rows && !RowsParam)
        refuse(Call->getArg(I)->getExprLoc(),
               "it passes an array of row pointers to '" + Name +
                   "', whose parameter '" + Param->getName() +
                   "' is no pointer to pointers: a device has its rows "
                   "packed, not their pointers");
      if (Rows)
        RowArgs[I] = *Rows;
      std::optional<Space> S = spaceOf(Call->getArg(I));
      if (!S)
        refuse(Call->getArg(I)->getExprLoc(),
               "it passes '" + Name +
                   "' a pointer that is not into an array of a data clause "
                   "or a local array");
      // A global the kernel gets as an input only: the callee must not
      // write it.
      const Expr *Root = Call->getArg(I)->IgnoreParenImpCasts();
      while (isa<ArraySubscriptExpr, UnaryOperator, BinaryOperator>(Root)) {
        if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Root))
          Root = ASE->getBase()->IgnoreParenImpCasts();
        else if (const auto *UO = dyn_cast<UnaryOperator>(Root))
          Root = UO->getSubExpr()->IgnoreParenImpCasts();
        else if (const auto *BO = dyn_cast<BinaryOperator>(Root))
          Root = (BO->getLHS()->getType()->isPointerType() ? BO->getLHS()
                                                           : BO->getRHS())
                     ->IgnoreParenImpCasts();
      }
      const auto *RootRef = dyn_cast<DeclRefExpr>(Root);
      const auto *Global =
          RootRef ? dyn_cast<VarDecl>(RootRef->getDecl()) : nullptr;
      if (Global && isGlobal(Global) && *S == Space::Global &&
          (Current.Fn || !clauseArray(Global)) &&
          !Param->getType()->getPointeeType().isConstQualified())
        refuse(Call->getArg(I)->getExprLoc(),
               "it passes '" + Global->getQualifiedNameAsString() + "' to '" +
                   Name + "', whose parameter '" + Param->getName() +
                   "' is no pointer to const: a device gets the globals a "
                   "loop reads, never those it writes (name it in "
                   "inout(...) in the pragma, or make the parameter const)");
      // A helper's writes go unmarked: none may reach a masked array,
      // through a pointer to it or one that was const before.
      if (!Param->getType()->getPointeeType().isConstQualified()) {
        if (const VarDecl *Masked = maskedRoot(Call->getArg(I), false))
          refuse(Call->getArg(I)->getExprLoc(),
                 "it passes '" + Masked->getName() + "' to '" + Name +
                     "', whose parameter '" + Param->getName() +
                     "' is no pointer to const: a device merges the writes "
                     "to '" +
                     Masked->getName() +
                     "' through a write mask, which fpm marks at the "
                     "loop's own writes only (write its elements in the "
                     "loop's body, or make the parameter const if '" +
                     Name + "' only reads them)");
        QualType ArgType = Call->getArg(I)->IgnoreParenImpCasts()->getType();
        if (Current.Fn && ArgType->isPointerType() &&
            ArgType->getPointeeType().isConstQualified() &&
            llvm::any_of(Request.Arrays,
                         [](const ClauseArray &A) { return A.Masked; }))
          refuse(Call->getArg(I)->getExprLoc(),
                 "it passes a pointer to const to '" + Name +
                     "', whose parameter '" + Param->getName() +
                     "' is no pointer to const: it may write an array whose "
                     "writes a device merges through a write mask, which "
                     "fpm marks at the loop's own writes only");
      }
      Spaces.push_back(*S);
      Signature += *S == Space::Global ? "g" : "p";
    }
    if (llvm::is_contained(HelpersInProgress, Def))
      refuse(Loc, "'" + Name + "' is recursive, and OpenCL C has no recursion");
    // Each function (an overload, a template's instantiation, one of a
    // namespace) and address spaces of its pointers has a name of its own,
    // in the `fpm_f_` names no name of the user's or OpenCL C's meets.
    auto [It, New] = HelperNames.try_emplace({Def, Signature});
    if (New) {
      std::string Base = "fpm_f_" + Name;
      if (Signature.find('p') != std::string::npos)
        Base += "_" + Signature;
      std::string Emitted = Base;
      for (unsigned K = 2; !HelperNamesTaken.insert(Emitted).second; ++K)
        Emitted = Base + "_" + std::to_string(K);
      It->second = Emitted;
      printFunction(Def, Spaces, Emitted);
    }
    // The globals it reads, after its own arguments.
    llvm::SmallVector<std::string, 2> Globals;
    for (const VarDecl *VD : HelperGlobals.lookup(It->second))
      Globals.push_back(passGlobal(VD, Loc, Name));
    OS << It->second;
    PrintArgs(
        [&](unsigned I) {
          return I < Def->getNumParams() && Def->hasPrototype()
                     ? Def->getParamDecl(I)->getType()
                     : QualType();
        },
        Globals);
    return;
  }
  StringRef Base = Name;
  const auto &Math = mathFunctions();
  if (auto It = Math.find(Base);
      It != Math.end() && (InSystemHeader || FD->getBuiltinID())) {
    StringRef OpenCl = It->second.OpenCl;
    bool CastResult = It->second.CastResult;
    // C++'s std::abs of a floating type is fabs: OpenCL's abs takes
    // integers only.
    if (CastResult && Call->getType()->isRealFloatingType()) {
      OpenCl = "fabs";
      CastResult = false;
    }
    if (CastResult)
      OS << "(" << type(Call->getType(), Loc) << ")";
    OS << OpenCl;
    PrintArgs(CParamType);
    return;
  }
  if ((Base == "min" || Base == "max") && FD->isInStdNamespace() &&
      Call->getNumArgs() == 2) {
    // std::min(a, b) is (b < a) ? b : a; std::max(a, b) is (a < b) ? b : a.
    std::string T =
        type(Call->getType().getNonReferenceType().getUnqualifiedType(), Loc);
    std::string Fn = "fpm_std_" + Base.str() + "_" + T;
    std::string Definition =
        "static " + T + " " + Fn + "(" + T + " a, " + T + " b) { return " +
        (Base == "min" ? "(b < a) ? b : a" : "(a < b) ? b : a") + "; }\n";
    if (!llvm::is_contained(Prelude, Definition))
      Prelude.push_back(Definition);
    OS << Fn;
    PrintArgs(CParamType);
    return;
  }
  refuse(Loc, "it calls '" + Name + "', which has no body fpm can compile " +
                  "to OpenCL C");
}

bool KernelPrinter::handledStmt(Stmt *S, raw_ostream &OS) {
  if (Failure)
    return true;
  try {
    return print(S, OS);
  } catch (const Refused &) {
    return true;
  }
}

bool KernelPrinter::print(Stmt *S, raw_ostream &OS) {
  const auto *E = dyn_cast<Expr>(S);
  if (!E)
    refuse(S->getBeginLoc(), "it has a statement inside an expression");
  if (E->isTypeDependent() || E->isValueDependent())
    refuse(E->getExprLoc(), "it depends on a template parameter");
  // A double anywhere, even one the source never names (float * 2.0),
  // needs cl_khr_fp64.
  noteType(E->getType().getCanonicalType());
  SourceLocation Loc = E->getExprLoc();

  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    printDeclRef(DRE, OS);
    return true;
  }
  // A device has an array of row pointers' rows, packed, not the pointers.
  const Expr *RowTarget = nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(E); BO && BO->isAssignmentOp())
    RowTarget = BO->getLHS();
  else if (const auto *UO = dyn_cast<UnaryOperator>(E);
           UO && (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf))
    RowTarget = UO->getSubExpr();
  if (const VarDecl *Rows = RowTarget ? rowPointerOf(RowTarget) : nullptr)
    refuse(
        RowTarget->getBeginLoc(),
        "it " +
            std::string(isa<UnaryOperator>(E) &&
                                cast<UnaryOperator>(E)->getOpcode() == UO_AddrOf
                            ? "takes the address of"
                            : "changes") +
            " a row pointer of '" + Rows->getName() +
            "': a device gets its rows packed, not their pointers");
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && BO->isAssignmentOp()) {
    checkWrite(BO->getLHS(), Loc);
    if (const VarDecl *Masked = maskedRoot(BO->getLHS(), true)) {
      printMarked(BO->getLHS(), Masked, OS);
      OS << " " << BO->getOpcodeStr() << " ";
      printExpr(BO->getRHS(), OS);
      return true;
    }
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->isIncrementDecrementOp()) {
    checkWrite(UO->getSubExpr(), Loc);
    if (const VarDecl *Masked = maskedRoot(UO->getSubExpr(), true)) {
      StringRef Op = UnaryOperator::getOpcodeStr(UO->getOpcode());
      if (UO->isPrefix())
        OS << Op;
      printMarked(UO->getSubExpr(), Masked, OS);
      if (UO->isPostfix())
        OS << Op;
      return true;
    }
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return printSubscript(ASE, OS);
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
      Op && Op->getOperator() == OO_Equal) {
    // A struct's trivial assignment is C's.
    const auto *Method = dyn_cast_or_null<CXXMethodDecl>(Op->getDirectCallee());
    if (Method && Method->isTrivial() &&
        (Method->isCopyAssignmentOperator() ||
         Method->isMoveAssignmentOperator())) {
      checkWrite(Op->getArg(0), Loc);
      if (const VarDecl *Masked = maskedRoot(Op->getArg(0), true))
        printMarked(Op->getArg(0), Masked, OS);
      else
        printExpr(Op->getArg(0), OS);
      OS << " = ";
      printValue(Op->getArg(1), Op->getArg(0)->getType(), OS);
      return true;
    }
  }
  if (isa<CXXOperatorCallExpr, CXXMemberCallExpr>(E)) {
    const FunctionDecl *Callee = cast<CallExpr>(E)->getDirectCallee();
    refuse(Loc,
           "it calls the C++ " +
               std::string(isa<CXXOperatorCallExpr>(E) ? "operator"
                                                       : "member function") +
               " '" + (Callee ? Callee->getQualifiedNameAsString() : "?") +
               "'");
  }
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    printCall(Call, OS);
    return true;
  }
  if (const auto *Cast = dyn_cast<ExplicitCastExpr>(E)) {
    OS << "(" << type(Cast->getType(), Loc) << ")";
    const Expr *Sub = Cast->getSubExprAsWritten();
    // `S{x, y}` is the compound literal `(S){x, y}`.
    bool Paren = !isa<ParenExpr, DeclRefExpr, IntegerLiteral, FloatingLiteral,
                      InitListExpr>(Sub->IgnoreImpCasts());
    if (Paren)
      OS << "(";
    printExpr(Sub, OS);
    if (Paren)
      OS << ")";
    return true;
  }
  if (const auto *ICE = dyn_cast<ImplicitCastExpr>(E)) {
    switch (ICE->getCastKind()) {
    case CK_LValueToRValue:
    case CK_NoOp:
    case CK_IntegralCast:
    case CK_FloatingCast:
    case CK_IntegralToFloating:
    case CK_FloatingToIntegral:
    case CK_IntegralToBoolean:
    case CK_FloatingToBoolean:
    case CK_BooleanToSignedIntegral:
    case CK_ArrayToPointerDecay:
    case CK_FunctionToPointerDecay:
    case CK_BuiltinFnToFnPtr:
    case CK_ToVoid:
      return false;
    default:
      refuse(Loc, "it converts '" +
                      ICE->getSubExpr()->getType().getAsString(Policy) +
                      "' to '" + ICE->getType().getAsString(Policy) + "'");
    }
  }
  if (const auto *IL = dyn_cast<IntegerLiteral>(E)) {
    const auto *BT = IL->getType()->getAs<BuiltinType>();
    OS << toString(IL->getValue(), 10, !IL->getType()->isUnsignedIntegerType());
    if (IL->getType()->isUnsignedIntegerType())
      OS << "u";
    if (BT && (BT->getKind() == BuiltinType::Long ||
               BT->getKind() == BuiltinType::ULong ||
               BT->getKind() == BuiltinType::LongLong ||
               BT->getKind() == BuiltinType::ULongLong))
      OS << "L";
    return true;
  }
  if (const auto *FL = dyn_cast<FloatingLiteral>(E)) {
    type(FL->getType(), Loc);
    // The literal as written: the exact value, and readable.
    SmallString<32> Buffer;
    OS << Lexer::getSpelling(SM.getSpellingLoc(FL->getLocation()), Buffer, SM,
                             Ctx.getLangOpts());
    return true;
  }
  if (const auto *U = dyn_cast<UnaryExprOrTypeTraitExpr>(E)) {
    Expr::EvalResult R;
    if (U->getKind() != UETT_SizeOf || !U->EvaluateAsInt(R, Ctx))
      refuse(Loc, "it uses an operator OpenCL C does not have here");
    OS << toString(R.Val.getInt(), 10) << "UL";
    return true;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if ((UO->getOpcode() == UO_AddrOf || UO->getOpcode() == UO_Deref) &&
        !spaceOf(UO->getOpcode() == UO_AddrOf ? UO : UO->getSubExpr()))
      refuse(Loc, "it takes an address that is not into an array of a data "
                  "clause or a local array");
    return false;
  }
  if (isa<ImplicitValueInitExpr>(E)) {
    if (!E->getType()->isScalarType())
      refuse(Loc, "it leaves part of an aggregate initialiser implicit");
    OS << "0";
    return true;
  }
  if (isa<StringLiteral>(E))
    refuse(Loc, "it uses a string literal");
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    QualType Base = ME->getBase()->getType();
    if (ME->isArrow())
      Base = Base->getPointeeType();
    type(Base, ME->getBeginLoc()); // a struct the kernel can hold
    const auto *Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!Field)
      refuse(Loc, "it uses '" + ME->getMemberDecl()->getName() + "' of '" +
                      Base.getUnqualifiedType().getAsString(Policy) +
                      "', which is not a data member");
    printExpr(ME->getBase(), OS);
    OS << (ME->isArrow() ? "->" : ".") << kernelIdentifier(Field->getName());
    return true;
  }
  if (const auto *Literal = dyn_cast<CompoundLiteralExpr>(E);
      Literal && Literal->getType()->isRecordType()) {
    OS << "(" << type(Literal->getType(), Loc) << ")";
    printExpr(Literal->getInitializer(), OS);
    return true;
  }
  if (const auto *Designated = dyn_cast<DesignatedInitExpr>(E)) {
    // `.x = 1`, `[2] = 0`: members by their kernel names.
    for (const DesignatedInitExpr::Designator &D : Designated->designators()) {
      Expr::EvalResult R;
      if (D.isFieldDesignator() && D.getFieldDecl())
        OS << "." << kernelIdentifier(D.getFieldDecl()->getName());
      else if (D.isArrayDesignator() &&
               Designated->getArrayIndex(D)->EvaluateAsInt(R, Ctx))
        OS << "[" << toString(R.Val.getInt(), 10) << "]";
      else
        refuse(Loc, "it uses a designator OpenCL C does not have here");
    }
    OS << " = ";
    printExpr(Designated->getInit(), OS);
    return true;
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    // A copy of a struct, as C copies it (a trivial copy's arguments, a
    // return value).
    const CXXConstructorDecl *Ctor = Construct->getConstructor();
    if (!Ctor->isTrivial() || !Ctor->isCopyOrMoveConstructor() ||
        Construct->getNumArgs() != 1)
      refuse(Loc, "it calls a constructor of '" +
                      Construct->getType().getAsString(Policy) + "'");
    printExpr(Construct->getArg(0), OS);
    return true;
  }
  if (const auto *List = dyn_cast<InitListExpr>(E);
      List && List->isSemanticForm()) {
    // The kernel prints the list as written, which has no C++ default
    // member initialisers (`double y = 2;`): C would make those members 0.
    std::function<bool(const Expr *)> UsesDefault = [&](const Expr *Init) {
      if (isa_and_nonnull<CXXDefaultInitExpr>(Init))
        return true;
      const auto *Inner = dyn_cast_or_null<InitListExpr>(Init);
      return Inner && (llvm::any_of(Inner->inits(), UsesDefault) ||
                       (Inner->hasArrayFiller() &&
                        UsesDefault(Inner->getArrayFiller())));
    };
    if (UsesDefault(List))
      refuse(Loc, "it leaves a member of '" +
                      List->getType().getAsString(Policy) +
                      "' to its default member initialiser, which OpenCL C "
                      "does not have (initialise every member)");
  }
  if (isa<ParenExpr, BinaryOperator, ConditionalOperator, ConstantExpr,
          SubstNonTypeTemplateParmExpr, CharacterLiteral, CXXBoolLiteralExpr,
          InitListExpr, ExprWithCleanups, MaterializeTemporaryExpr>(E))
    return false;
  refuse(Loc, "OpenCL C has no equivalent of this expression ('" +
                  std::string(E->getStmtClassName()) + "')");
}

void KernelPrinter::printDecl(const DeclStmt *DS, raw_ostream &OS) {
  bool First = true;
  for (const Decl *D : DS->decls()) {
    if (isa<TypedefNameDecl, StaticAssertDecl, TagDecl>(D))
      continue; // types are printed canonical, structs before the kernel
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD)
      refuse(D->getLocation(), "it declares a type or function in the body");
    if (!VD->isLocalVarDecl() || VD->isStaticLocal())
      refuse(VD->getLocation(),
             "it declares the static variable '" + VD->getName() + "'");
    if (VD->hasExternalStorage()) // a global's, not a local
      refuse(VD->getLocation(),
             "it declares '" + VD->getName() + "' extern inside a function");
    if (!First)
      OS << " ";
    First = false;
    OS << declarator(VD->getType(), kernelName(VD), VD->getLocation());
    if (const Expr *Init = VD->getInit()) {
      if (const auto *List = dyn_cast<InitListExpr>(Init->IgnoreImplicit());
          List && VD->getType()->isScalarType() && List->getNumInits() == 1)
        Init = List->getInit(0);
      // C++'s `S s;` and `S s = t;` of a struct: C's.
      if (const auto *Construct =
              dyn_cast<CXXConstructExpr>(Init->IgnoreImplicit());
          Construct && Construct->getConstructor()->isTrivial()) {
        if (Construct->getConstructor()->isDefaultConstructor() &&
            !Construct->requiresZeroInitialization()) {
          OS << ";";
          continue;
        }
        if (Construct->getNumArgs() == 1)
          Init = Construct->getArg(0);
      }
      if (isa<CXXConstructExpr, ParenListExpr>(Init->IgnoreImplicit()))
        refuse(Init->getExprLoc(),
               "it initialises '" + VD->getName() + "' with a C++ constructor");
      OS << " = ";
      printExpr(Init, OS);
    }
    OS << ";";
  }
}

/// E where a value of type T is wanted: C++'s braced list of a struct
/// (`return {x, y};`, `f({x, y})`) as C's compound literal.
void KernelPrinter::printValue(const Expr *E, QualType T, raw_ostream &OS) {
  if (!T.isNull() && T->isRecordType() &&
      isa<InitListExpr>(E->IgnoreImplicit()))
    OS << "("
       << type(T.getNonReferenceType().getUnqualifiedType(), E->getExprLoc())
       << ")";
  printExpr(E, OS);
}

void KernelPrinter::printBlockOrStmt(const Stmt *S, unsigned Indent,
                                     raw_ostream &OS) {
  if (isa<CompoundStmt>(S)) {
    printStmt(S, Indent, OS);
    return;
  }
  OS << "{\n";
  OS.indent(Indent + 2);
  printStmt(S, Indent + 2, OS);
  OS << "\n";
  OS.indent(Indent) << "}";
}

/// Prints S at the current column; a compound's lines at Indent + 2.
void KernelPrinter::printStmt(const Stmt *S, unsigned Indent, raw_ostream &OS) {
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    OS << "{\n";
    for (const Stmt *Child : CS->body()) {
      OS.indent(Indent + 2);
      printStmt(Child, Indent + 2, OS);
      OS << "\n";
    }
    OS.indent(Indent) << "}";
    return;
  }
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    return printDecl(DS, OS);
  if (const auto *E = dyn_cast<Expr>(S)) {
    printExpr(E, OS);
    OS << ";";
    return;
  }
  if (isa<NullStmt>(S)) {
    OS << ";";
    return;
  }
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    if (If->getInit() || If->getConditionVariable() || If->isConsteval())
      refuse(If->getIfLoc(), "it uses a C++ form of 'if'");
    OS << "if (";
    printExpr(If->getCond(), OS);
    OS << ") ";
    printBlockOrStmt(If->getThen(), Indent, OS);
    if (const Stmt *Else = If->getElse()) {
      OS << " else ";
      if (isa<IfStmt>(Else))
        printStmt(Else, Indent, OS);
      else
        printBlockOrStmt(Else, Indent, OS);
    }
    return;
  }
  if (const auto *For = dyn_cast<ForStmt>(S)) {
    if (For->getConditionVariable())
      refuse(For->getForLoc(), "it declares a variable in a loop's condition");
    OS << "for (";
    if (const Stmt *Init = For->getInit()) {
      if (const auto *DS = dyn_cast<DeclStmt>(Init))
        printDecl(DS, OS);
      else
        printStmt(Init, Indent, OS);
    } else {
      OS << ";";
    }
    if (const Expr *Cond = For->getCond()) {
      OS << " ";
      printExpr(Cond, OS);
    }
    OS << ";";
    if (const Expr *Inc = For->getInc()) {
      OS << " ";
      printExpr(Inc, OS);
    }
    OS << ") ";
    ++LoopDepth;
    printBlockOrStmt(For->getBody(), Indent, OS);
    --LoopDepth;
    return;
  }
  if (const auto *While = dyn_cast<WhileStmt>(S)) {
    if (While->getConditionVariable())
      refuse(While->getWhileLoc(),
             "it declares a variable in a loop's condition");
    OS << "while (";
    printExpr(While->getCond(), OS);
    OS << ") ";
    ++LoopDepth;
    printBlockOrStmt(While->getBody(), Indent, OS);
    --LoopDepth;
    return;
  }
  if (const auto *Do = dyn_cast<DoStmt>(S)) {
    OS << "do ";
    ++LoopDepth;
    printBlockOrStmt(Do->getBody(), Indent, OS);
    --LoopDepth;
    OS << " while (";
    printExpr(Do->getCond(), OS);
    OS << ");";
    return;
  }
  if (const auto *Switch = dyn_cast<SwitchStmt>(S)) {
    if (Switch->getInit() || Switch->getConditionVariable())
      refuse(Switch->getSwitchLoc(), "it uses a C++ form of 'switch'");
    OS << "switch (";
    printExpr(Switch->getCond(), OS);
    OS << ") ";
    printBlockOrStmt(Switch->getBody(), Indent, OS);
    return;
  }
  if (const auto *Case = dyn_cast<CaseStmt>(S)) {
    if (Case->caseStmtIsGNURange())
      refuse(Case->getCaseLoc(), "it uses a case range");
    Expr::EvalResult R;
    if (!Case->getLHS()->EvaluateAsInt(R, Ctx))
      refuse(Case->getCaseLoc(), "its case label is not a constant");
    OS << "case " << toString(R.Val.getInt(), 10) << ":\n";
    OS.indent(Indent + 2);
    printStmt(Case->getSubStmt(), Indent + 2, OS);
    return;
  }
  if (const auto *Default = dyn_cast<DefaultStmt>(S)) {
    OS << "default:\n";
    OS.indent(Indent + 2);
    printStmt(Default->getSubStmt(), Indent + 2, OS);
    return;
  }
  if (isa<BreakStmt>(S)) {
    OS << "break;";
    return;
  }
  if (isa<ContinueStmt>(S)) {
    // In the kernel, the partitioned loop's own `continue` ends the
    // work-item's iteration: it returns, or with reductions leaves the
    // `do { ... } while (0)` around the body, before the work-group's
    // reduction.
    if (LoopDepth == 0 && !Current.Fn && Request.Reductions.empty()) {
      OS << "return;";
    } else {
      ContinuesBody |= LoopDepth == 0 && !Current.Fn;
      OS << "continue;";
    }
    return;
  }
  if (const auto *Return = dyn_cast<ReturnStmt>(S)) {
    OS << "return";
    if (const Expr *Value = Return->getRetValue()) {
      OS << " ";
      printValue(Value, Current.Fn ? Current.Fn->getReturnType() : QualType(),
                 OS);
    }
    OS << ";";
    return;
  }
  if (const auto *Attributed = dyn_cast<AttributedStmt>(S))
    return printStmt(Attributed->getSubStmt(), Indent, OS);
  if (isa<GotoStmt, LabelStmt, IndirectGotoStmt>(S))
    refuse(S->getBeginLoc(), "it uses 'goto'");
  if (isa<CXXTryStmt>(S))
    refuse(S->getBeginLoc(), "it uses C++ exceptions");
  if (isa<CXXForRangeStmt>(S))
    refuse(S->getBeginLoc(), "it uses a range-based 'for'");
  if (isa<AsmStmt>(S))
    refuse(S->getBeginLoc(), "it uses inline assembly");
  refuse(S->getBeginLoc(), "OpenCL C has no equivalent of this statement ('" +
                               std::string(S->getStmtClassName()) + "')");
}

void KernelPrinter::printFunction(const FunctionDecl *FD,
                                  const llvm::SmallVector<Space, 2> &Spaces,
                                  const std::string &Name) {
  Scope Saved = std::move(Current);
  unsigned SavedDepth = LoopDepth;
  Current = Scope();
  Current.Fn = FD;
  LoopDepth = 0;
  HelpersInProgress.push_back(FD);
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  SourceLocation Loc = FD->getLocation();
  QualType Result = FD->getReturnType();
  // Which function of the user's it is, where its name does not say.
  std::string Qualified;
  llvm::raw_string_ostream QOS(Qualified);
  FD->getNameForDiagnostic(QOS, Policy, /*Qualified=*/true);
  if (Qualified != FD->getName())
    OS << "/* " << llvm::join(llvm::split(Qualified, "*/"), "* /") << " */\n";
  OS << "static " << (Result->isVoidType() ? "void" : type(Result, Loc)) << " "
     << Name << "(";
  unsigned PointerIndex = 0;
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    const ParmVarDecl *P = FD->getParamDecl(I);
    if (I > 0)
      OS << ", ";
    QualType T = P->getType();
    if (const auto *PT = T->getAs<PointerType>()) {
      Space S = Spaces[PointerIndex++];
      Current.Spaces[P] = S;
      QualType Pointee = PT->getPointeeType();
      // An array of row pointers (printCall passed one): its rows packed, a
      // flat matrix, and their length after it.
      if (Pointee->isPointerType() &&
          !Pointee->getPointeeType()->isPointerType() &&
          !Pointee->getPointeeType()->isArrayType()) {
        std::string Length = "fpm_rowlen_" + kernelName(P);
        Current.RowLengths[P] = Length;
        OS << "__global " << type(Pointee->getPointeeType(), Loc) << " *"
           << kernelName(P) << ", const long " << Length;
        continue;
      }
      // Arrays of constant extents (`double a[5][5]`): their elements, flat.
      if (pointsToArrays(T))
        while (const ArrayType *AT = Ctx.getAsArrayType(Pointee))
          Pointee = AT->getElementType();
      if (Pointee->isPointerType() || Pointee->isArrayType())
        refuse(P->getLocation(),
               "'" + FD->getName() +
                   "' takes a pointer to pointers or to arrays of a "
                   "variable extent");
      OS << (S == Space::Global ? "__global " : "") << type(Pointee, Loc)
         << " *" << kernelName(P);
      continue;
    }
    if (T->isReferenceType())
      refuse(P->getLocation(), "'" + FD->getName() + "' takes a C++ reference");
    OS << type(T, P->getLocation()) << " " << kernelName(P);
  }
  std::string Body;
  llvm::raw_string_ostream BOS(Body);
  printStmt(FD->getBody(), 0, BOS);
  // The globals it reads, known once its body (and its callees') is
  // printed: the kernel's values and buffers, passed down.
  unsigned Count = FD->getNumParams();
  for (const VarDecl *VD : Current.Globals) {
    OS << (Count++ > 0 ? ", " : "");
    QualType T = VD->getType().getNonReferenceType();
    if (T->isArrayType() || T->isPointerType())
      OS << "__global const "
         << type(shapeOf(VD, Loc).Element.getUnqualifiedType(), Loc) << " *";
    else
      OS << "const " << type(T.getUnqualifiedType(), Loc) << " ";
    OS << scalarName(VD);
  }
  if (FD->getNumParams() == 0 && Current.Globals.empty())
    OS << "void";
  OS << ") " << Body << "\n";
  HelperGlobals[Name].assign(Current.Globals.begin(), Current.Globals.end());
  HelpersInProgress.pop_back();
  Helpers += Text;
  Current = std::move(Saved);
  LoopDepth = SavedDepth;
}

/// A reduction operator's identity ("MIN", "MAX": the type's least and
/// largest values; "~0": all bits set) and how work-item 0 combines its
/// value {0} with work-item fpm_j's {1}.
static std::pair<const char *, const char *>
reductionCombining(ReductionOp Op) {
  switch (Op) {
  case ReductionOp::Add:
    return {"0", "{0} + {1}"};
  case ReductionOp::Mul:
    return {"1", "{0} * {1}"};
  case ReductionOp::Min:
    return {"MAX", "{1} < {0} ? {1} : {0}"};
  case ReductionOp::Max:
    return {"MIN", "{0} < {1} ? {1} : {0}"};
  case ReductionOp::BitAnd:
    return {"~0", "{0} & {1}"};
  case ReductionOp::BitOr:
    return {"0", "{0} | {1}"};
  case ReductionOp::BitXor:
    return {"0", "{0} ^ {1}"};
  case ReductionOp::And:
    return {"1", "{0} && {1}"};
  case ReductionOp::Or:
    return {"0", "{0} || {1}"};
  }
  llvm_unreachable("a reduction operator");
}

/// The kernel's part of the reductions: a `__global` parameter for each
/// one's partial results (one per work-group; a bool's as a uchar, which
/// OpenCL C lets a buffer hold), appended to Params; the work-item's
/// accumulator, set to the operator's identity, and the work-group's
/// `__local` copies (at the kernel's scope, as OpenCL C wants them), in
/// Decls; Statements wrapped in `do { ... } while (0)` when the body's
/// `continue` must reach the reduction. Returns the statements after the
/// body: each work-item stores its accumulator, and work-item 0 combines
/// the group's in work-item order, as fpm's runtime combines partial
/// results (so that a run gives the same bits every time), and stores the
/// group's at get_group_id(0), in a __local array of
/// FPM_MAX_WORK_GROUP_SIZE (fpm.h) elements.
std::string KernelPrinter::reductionCode(std::string &Params,
                                         std::string &Decls,
                                         std::string &Statements) {
  if (Request.Reductions.empty())
    return "";
  std::string Stores, Combine, Partials;
  for (const KernelReduction &R : Request.Reductions) {
    if (R.Type->isSpecificBuiltinType(BuiltinType::LongDouble))
      refuse(R.Loc, "its reduction variable '" + R.Name +
                        "' is a long double, which OpenCL C does not have");
    std::string T = type(R.Type.getUnqualifiedType(), R.Loc);
    std::string Stored = T == "bool" ? "uchar" : T;
    std::string Name = kernelIdentifier(R.Name);
    std::string Group = "fpm_group_" + Name, Partial = "fpm_partial_" + Name;
    Params += ", __global " + Stored + " *" + Partial;
    static const llvm::StringMap<std::pair<const char *, const char *>> Limits =
        {{"char", {"CHAR_MIN", "CHAR_MAX"}},
         {"uchar", {"0", "UCHAR_MAX"}},
         {"short", {"SHRT_MIN", "SHRT_MAX"}},
         {"ushort", {"0", "USHRT_MAX"}},
         {"int", {"INT_MIN", "INT_MAX"}},
         {"uint", {"0", "UINT_MAX"}},
         {"long", {"LONG_MIN", "LONG_MAX"}},
         {"ulong", {"0", "ULONG_MAX"}},
         {"bool", {"false", "true"}},
         {"float", {"-INFINITY", "INFINITY"}},
         {"double", {"-INFINITY", "INFINITY"}}};
    const auto [Identity, Combining] = reductionCombining(R.Op);
    std::string Initial = Identity;
    if (Initial == "MIN")
      Initial = Limits.lookup(T).first;
    else if (Initial == "MAX")
      Initial = Limits.lookup(T).second;
    else if (Initial == "~0")
      Initial = T == "bool" ? "true" : "(" + T + ")~0";
    std::string Combined =
        llvm::formatv(Combining, Name, Group + "[fpm_j]").str();
    Decls += "  __local " + Stored + " " + Group + "[" +
             std::to_string(FPM_MAX_WORK_GROUP_SIZE) + "];\n";
    Decls += "  " + T + " " + Name + " = " + Initial + "; /* reduction(" +
             reductionOpSpelling(R.Op) + ": " + R.Name + ") */\n";
    Stores += "  " + Group + "[fpm_l] = " + Name + ";\n";
    Combine += "      " + Name + " = " + Combined + ";\n";
    Partials += "    " + Partial + "[get_group_id(0)] = " + Name + ";\n";
  }
  if (ContinuesBody) // its `continue` leaves the do-while
    Statements = "  do {\n" + indented(Statements) + "  } while (0);\n";
  return "  const size_t fpm_l = get_local_id(0);\n" + Stores +
         "  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "  if (fpm_l == 0) {\n"
         "    for (size_t fpm_j = 1; fpm_j < get_local_size(0); ++fpm_j) {\n" +
         Combine + "    }\n" + Partials + "  }\n";
}

GeneratedKernel KernelPrinter::run() {
  const VarDecl *Var = Request.Var;
  SourceLocation VarLoc = Var->getLocation();
  std::string VarType = type(Var->getType().getUnqualifiedType(), VarLoc);

  const Stmt *LoopBody = Request.For->getBody();
  // The host's variables that get an `fpm_v_` name: those the body names
  // with a qualifier, and the globals the functions it calls read, which
  // the kernel passes to them where a name of the body's may hide theirs.
  llvm::SmallPtrSet<const FunctionDecl *, 8> Walked;
  std::function<void(const Stmt *, bool)> FindQualified = [&](const Stmt *S,
                                                              bool InHelper) {
    if (!S)
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl())) {
        if (InHelper && isGlobal(VD))
          Qualified.insert(atLoop(VD));
        else if (!InHelper && DRE->hasQualifier() && !isInsideLoop(VD))
          Qualified.insert(isGlobal(VD) ? atLoop(VD) : VD);
      }
    if (const auto *DS = dyn_cast<DeclStmt>(S); DS && !InHelper)
      for (const Decl *D : DS->decls())
        if (const auto *VD = dyn_cast<VarDecl>(D))
          BodyNames.insert(kernelName(VD));
    if (const auto *Call = dyn_cast<CallExpr>(S))
      if (const FunctionDecl *FD = Call->getDirectCallee(), *Def = nullptr;
          FD && FD->hasBody(Def) && Walked.insert(Def).second)
        FindQualified(Def->getBody(), true);
    for (const Stmt *Child : S->children())
      FindQualified(Child, InHelper);
  };
  FindQualified(LoopBody, false);
  std::function<void(const Stmt *)> FindWrites = [&](const Stmt *S) {
    if (!S)
      return;
    const Expr *Written = nullptr;
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && BO->isAssignmentOp())
      Written = BO->getLHS();
    else if (const auto *UO = dyn_cast<UnaryOperator>(S);
             UO && UO->isIncrementDecrementOp())
      Written = UO->getSubExpr();
    else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S);
             Op && Op->isAssignmentOp())
      Written = Op->getArg(0);
    if (const VarDecl *VD = Written ? storageOf(Written) : nullptr)
      WrittenHostVars.insert(VD);
    for (const Stmt *Child : S->children())
      FindWrites(Child);
  };
  FindWrites(LoopBody);
  std::string Statements;
  llvm::raw_string_ostream SOS(Statements);
  if (const auto *CS = dyn_cast<CompoundStmt>(LoopBody)) {
    for (const Stmt *Child : CS->body()) {
      SOS.indent(2);
      printStmt(Child, 2, SOS);
      SOS << "\n";
    }
  } else {
    SOS.indent(2);
    printStmt(LoopBody, 2, SOS);
    SOS << "\n";
  }
  // The body's block is the kernel's, where the parameters and the loop's
  // variables are declared too: a variable the body declares at its top
  // under one of their names (C lets `double s = 2;` follow a use of the
  // host's s) needs a block of its own.
  llvm::StringSet<> KernelScope = {kernelName(Var)};
  for (const VarDecl *VD : Scalars)
    KernelScope.insert(scalarName(VD));
  for (const VarDecl *VD : ArraysUsed)
    KernelScope.insert(kernelName(VD));
  for (const VarDecl *VD : WholeArrays)
    KernelScope.insert(scalarName(VD));
  for (const std::string &Name : Request.Private)
    KernelScope.insert(kernelIdentifier(Name));
  for (const KernelReduction &R : Request.Reductions)
    KernelScope.insert(kernelIdentifier(R.Name));
  bool Redeclares = false;
  if (const auto *CS = dyn_cast<CompoundStmt>(LoopBody))
    for (const Stmt *Child : CS->body())
      if (const auto *DS = dyn_cast<DeclStmt>(Child))
        for (const Decl *D : DS->decls())
          if (const auto *VD = dyn_cast<VarDecl>(D))
            Redeclares |= KernelScope.contains(kernelName(VD));
  // With reductions, the body goes in a block of its own below.
  if (Redeclares && Request.Reductions.empty())
    Statements = "  {\n" + indented(Statements) + "  }\n";

  GeneratedKernel K;
  K.Name = Request.Name;
  // -w: the compiler warned about the body when it compiled the program;
  // the device's compiler would print the same warnings on the program's
  // stderr at its first run.
  K.Options = "-cl-fp32-correctly-rounded-divide-sqrt -w";
  // Parameters: the loop's lower bound and step, the scalars, the arrays
  // in the order of the data clauses (each with its origin, where it takes
  // one), the global arrays copied whole, the variable extents.
  std::string OriginMoves;
  /// The functions that mark the elements a masked array's writes reach.
  std::string MarkHelpers;
  std::string Params = "const " + VarType + " fpm_lower, const long fpm_step";
  K.Params.push_back({KernelParam::Kind::Lower, "", 0, "", "", {}});
  K.Params.push_back({KernelParam::Kind::Step, "", 0, "", "", {}});
  std::string PrivateDecls;
  std::string BoolDecls;
  for (const VarDecl *VD : Scalars) {
    std::string T =
        type(VD->getType().getNonReferenceType().getUnqualifiedType(),
             VD->getLocation());
    std::string Name = scalarName(VD);
    if (T == "bool") {
      // A kernel may take no bool: its byte comes as a uchar.
      Params += ", const uchar fpm_bool_" + Name;
      BoolDecls += "  const bool " + Name + " = fpm_bool_" + Name + ";\n";
    } else {
      Params += ", const " + T + " " + Name;
    }
    K.Params.push_back(
        {KernelParam::Kind::Scalar, hostName(VD), 0, "", "", {}});
  }
  for (const ClauseArray &A : Request.Arrays) {
    auto It = llvm::find_if(
        ArraysUsed, [&](const VarDecl *VD) { return VD->getName() == A.Name; });
    if (It == ArraysUsed.end())
      continue;
    const VarDecl *VD = *It;
    // An array named in several sections: the runtime gives each section's
    // argument the first one's buffer, and the body indexes that one; the
    // others' parameters only take their sections to the runtime.
    auto Sections = llvm::make_filter_range(
        Request.Arrays, [&](const ClauseArray &B) { return B.Name == A.Name; });
    bool First = &*Sections.begin() == &A;
    bool Writes =
        llvm::any_of(Sections, [](const ClauseArray &B) { return B.Written; });
    ArrayShape Shape = shapeOf(VD, VD->getLocation());
    Params +=
        std::string(", __global ") + (Writes && First ? "" : "const ") +
        type(Shape.Element.getUnqualifiedType(), VD->getLocation()) + " *" +
        (First
             ? kernelName(VD)
             : "fpm_section" + std::to_string(A.Index) + "_" + kernelName(VD));
    K.Params.push_back({KernelParam::Kind::Array, A.Name, A.Index, "", "", {}});
    if (!First)
      continue;
    // The origin counts the runtime's elements: whole rows of the first
    // dimension, unless the section is described by scalars.
    std::string Rows;
    if (!A.ScalarUnits)
      for (const std::string &Extent : Shape.Extents)
        Rows += " * " + Extent;
    if (A.Origin) {
      // Its buffer starts at the section's lowest element: element 0 is
      // fpm_origin_<name> elements further.
      std::string Origin = "fpm_origin_" + kernelName(VD);
      Params += ", const long " + Origin;
      K.Params.push_back(
          {KernelParam::Kind::Origin, A.Name, A.Index, "", "", {}});
      OriginMoves += "  " + kernelName(VD) + " += " + Origin + Rows + ";\n";
    }
    auto Masked =
        llvm::find_if(Sections, [](const ClauseArray &B) { return B.Masked; });
    if (Masked != Sections.end()) {
      // Its write mask: a byte per element, at the element's index from
      // the pointer the body indexes (moved by the origin as it is).
      std::string Mask = "fpm_mask_" + kernelName(VD);
      Params += ", __global uchar *" + Mask;
      KernelParam P;
      P.K = KernelParam::Kind::Mask;
      P.Section = Masked->Index;
      P.HostExpr = "sizeof(" + A.Name;
      for (size_t I = 0; I <= Shape.Extents.size(); ++I)
        P.HostExpr += "[0]";
      P.HostExpr += ")";
      K.Params.push_back(P);
      if (A.Origin)
        OriginMoves +=
            "  " + Mask + " += fpm_origin_" + kernelName(VD) + Rows + ";\n";
      std::string T =
          "__global " +
          type(Shape.Element.getUnqualifiedType(), VD->getLocation()) + " *";
      MarkHelpers += "static " + T + "fpm_mark_" + kernelName(VD) + "(" + T +
                     "p, __global uchar *m, " + T +
                     "b) {\n  m[p - b] = 1;\n  return p;\n}\n";
    }
  }
  for (const VarDecl *VD : WholeArrays) {
    ArrayShape Shape = shapeOf(VD, VD->getLocation());
    Params += ", __global const " +
              type(Shape.Element.getUnqualifiedType(), VD->getLocation()) +
              " *" + scalarName(VD);
    KernelParam P;
    P.K = KernelParam::Kind::Whole;
    P.HostExpr = hostName(VD);
    P.Name = "in(" + StringRef(P.HostExpr).ltrim(':').str() + "[0:" +
             std::to_string(Ctx.getAsConstantArrayType(VD->getType())
                                ->getSize()
                                .getZExtValue()) +
             "])";
    P.UseLoc = FirstRead.lookup(VD);
    K.Params.push_back(P);
  }
  for (size_t I = 0; I < ExtentParams.size(); ++I) {
    Params += ", " + ExtentDecls[I];
    K.Params.push_back(ExtentParams[I]);
  }
  std::string ReductionDecls;
  std::string Reduce = reductionCode(Params, ReductionDecls, Statements);
  for (size_t R = 0; R < Request.Reductions.size(); ++R) {
    KernelParam P;
    P.K = KernelParam::Kind::Reduction;
    P.HostExpr = Request.Reductions[R].Name;
    P.Reduction = R;
    K.Params.push_back(P);
  }
  // The launch's end, last: the runtime launches whole work-groups of one
  // size (PoCL compiles a kernel per size), and the work-items past the end
  // pad the last one. They return at once; with reductions they skip the
  // body but not the group's barrier, and add the identity.
  Params += ", const ulong fpm_end";
  K.Params.push_back({KernelParam::Kind::End, "", 0, "", "", {}});
  std::string Padding;
  if (Request.Reductions.empty())
    Padding = "  if (get_global_id(0) >= fpm_end)\n"
              "    return; /* the last work-group's padding */\n";
  else
    Statements = "  if (get_global_id(0) < fpm_end) { /* past the end: the "
                 "identity */\n" +
                 indented(Statements) + "  }\n";

  // Private variables declared outside the loop: each work-item's own.
  llvm::StringSet<> Declared;
  std::function<void(const Stmt *)> FindPrivate = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && VD != Var && !isInsideLoop(VD) &&
          llvm::is_contained(Request.Private, VD->getName()) &&
          Declared.insert(VD->getName()).second) {
        if (VD->getType()->isVariablyModifiedType())
          refuse(VD->getLocation(),
                 "the private array '" + VD->getName() +
                     "' has a variable size; a work-item's private memory "
                     "needs a constant one");
        PrivateDecls += "  " +
                        declarator(VD->getType().getUnqualifiedType(),
                                   kernelName(VD), VD->getLocation()) +
                        ";\n";
      }
    for (const Stmt *Child : S->children())
      FindPrivate(Child);
  };
  FindPrivate(LoopBody);

  std::string Source;
  llvm::raw_string_ostream OS(Source);
  OS << "#pragma OPENCL FP_CONTRACT OFF\n";
  if (UsesDouble)
    OS << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  if (!Types.empty())
    OS << "/* The host's structs; a compiler that lays one out otherwise "
          "fails at its fpm_check_. */\n"
       << Types;
  for (const std::string &P : Prelude)
    OS << P;
  OS << Helpers << MarkHelpers;
  OS << "__kernel void " << K.Name << "(" << Params << ") {\n";
  OS << Padding << OriginMoves;
  OS << "  const " << VarType << " " << kernelName(Var) << " = (" << VarType
     << ")((ulong)fpm_lower + (ulong)get_global_id(0) * (ulong)fpm_step);\n";
  OS << BoolDecls << PrivateDecls << ReductionDecls << Statements << Reduce
     << "}\n";
  K.Source = std::move(Source);
  return K;
}

} // namespace

std::variant<GeneratedKernel, OffloadRefusal>
generateKernel(ASTContext &Ctx, const KernelRequest &Request) {
  KernelPrinter Printer(Ctx, Request);
  try {
    GeneratedKernel Kernel = Printer.run();
    if (!Printer.refusal())
      return Kernel;
  } catch (const Refused &) {
  }
  return *Printer.refusal();
}

} // namespace fpm
