//===- BuildId.cpp - which kjit build compiled an entry -------------------===//

#include "kjit/Cache/BuildId.h"

#include "kjit/Support/StrCat.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kjit::cache {

namespace {

std::string toHex(const unsigned char *bytes, size_t size) {
  static const char hex[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    text += hex[bytes[i] >> 4];
    text += hex[bytes[i] & 15];
  }
  return text;
}

/// The GNU build id in a block of ELF notes, if there is one.
std::optional<std::string> findBuildId(const unsigned char *notes,
                                       size_t size) {
  size_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr header;
    std::memcpy(&header, notes + at, sizeof header);
    size_t name = at + sizeof header;
    size_t desc = name + ((header.n_namesz + 3) & ~size_t(3));
    size_t next = desc + ((header.n_descsz + 3) & ~size_t(3));
    if (header.n_namesz > size || header.n_descsz > size || next > size)
      return std::nullopt;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(notes + name, "GNU", 4) == 0 && header.n_descsz > 0 &&
        header.n_descsz <= 64)
      return toHex(notes + desc, header.n_descsz);
    at = next;
  }
  return std::nullopt;
}

bool readAt(int fd, void *out, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<char *>(out) + done, size - done,
                      off_t(offset + done));
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

/// What the identity needs from an ELF file: its build id and, for the
/// closure, its DT_NEEDED names and DT_RUNPATH (or DT_RPATH).
struct ElfInfo {
  std::optional<std::string> buildId;
  std::vector<std::string> needed;
  std::string runpath;
};

std::optional<ElfInfo> readElf(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  Elf64_Ehdr eh;
  if (!readAt(fd, &eh, sizeof eh, 0) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 512)
    return std::nullopt;
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  if (!readAt(fd, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr), eh.e_phoff))
    return std::nullopt;
  ElfInfo info;
  for (const Elf64_Phdr &ph : phdrs) {
    if (ph.p_type != PT_NOTE || ph.p_filesz > 65536 || info.buildId)
      continue;
    std::vector<unsigned char> notes(ph.p_filesz);
    if (readAt(fd, notes.data(), notes.size(), ph.p_offset))
      info.buildId = findBuildId(notes.data(), notes.size());
  }
  // The dynamic section names strings by their offset in DT_STRTAB, an
  // address: a PT_LOAD segment maps it to the file.
  auto fileOffset = [&](uint64_t address) -> std::optional<uint64_t> {
    for (const Elf64_Phdr &ph : phdrs)
      if (ph.p_type == PT_LOAD && address >= ph.p_vaddr &&
          address < ph.p_vaddr + ph.p_filesz)
        return address - ph.p_vaddr + ph.p_offset;
    return std::nullopt;
  };
  for (const Elf64_Phdr &ph : phdrs) {
    if (ph.p_type != PT_DYNAMIC || ph.p_filesz > 65536)
      continue;
    std::vector<Elf64_Dyn> dyn(ph.p_filesz / sizeof(Elf64_Dyn));
    if (!readAt(fd, dyn.data(), dyn.size() * sizeof(Elf64_Dyn), ph.p_offset))
      break;
    uint64_t strtab = 0, strsz = 0;
    std::vector<uint64_t> needed;
    std::optional<uint64_t> runpath, rpath;
    for (const Elf64_Dyn &d : dyn) {
      if (d.d_tag == DT_NULL)
        break;
      if (d.d_tag == DT_STRTAB)
        strtab = d.d_un.d_ptr;
      else if (d.d_tag == DT_STRSZ)
        strsz = d.d_un.d_val;
      else if (d.d_tag == DT_NEEDED)
        needed.push_back(d.d_un.d_val);
      else if (d.d_tag == DT_RUNPATH)
        runpath = d.d_un.d_val;
      else if (d.d_tag == DT_RPATH)
        rpath = d.d_un.d_val;
    }
    std::optional<uint64_t> base = fileOffset(strtab);
    if (!base)
      break;
    // The names are near one another at the start of .dynstr: one read
    // for all of them when they fit in 64 KiB, else one read each.
    std::vector<uint64_t> offsets = needed;
    if (runpath)
      offsets.push_back(*runpath);
    else if (rpath)
      offsets.push_back(*rpath);
    uint64_t low = UINT64_MAX, high = 0;
    for (uint64_t offset : offsets) {
      low = std::min(low, offset);
      high = std::max(high, std::min<uint64_t>(offset + 512, strsz));
    }
    std::string window;
    if (!offsets.empty() && low < high && high - low <= 65536) {
      window.resize(high - low);
      if (!readAt(fd, window.data(), window.size(), *base + low))
        window.clear();
    }
    auto string = [&](uint64_t offset) {
      if (!window.empty() && offset >= low && offset < low + window.size()) {
        size_t end = window.find('\0', offset - low);
        if (end != std::string::npos)
          return window.substr(offset - low, end - (offset - low));
      }
      std::string text;
      char chunk[256];
      while (offset < strsz && text.size() < 4096) {
        size_t want = std::min<uint64_t>(sizeof chunk, strsz - offset);
        ssize_t n = pread(fd, chunk, want, off_t(*base + offset));
        if (n <= 0)
          break;
        const char *end = static_cast<const char *>(std::memchr(chunk, 0, n));
        text.append(chunk, end ? end - chunk : n);
        if (end)
          break;
        offset += uint64_t(n);
      }
      return text;
    };
    for (uint64_t offset : needed)
      info.needed.push_back(string(offset));
    if (runpath)
      info.runpath = string(*runpath);
    else if (rpath)
      info.runpath = string(*rpath);
    break;
  }
  return info;
}

std::string statIdentity(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "missing";
  return strCat("stat:", uint64_t(st.st_dev), ":", uint64_t(st.st_ino), ":",
                uint64_t(st.st_size), ":", int64_t(st.st_mtim.tv_sec), ".",
                int64_t(st.st_mtim.tv_nsec));
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::vector<std::string> splitPath(std::string_view list) {
  std::vector<std::string> parts;
  while (!list.empty()) {
    size_t colon = list.find(':');
    std::string_view part = list.substr(0, colon);
    if (!part.empty())
      parts.emplace_back(part);
    if (colon == std::string_view::npos)
      break;
    list.remove_prefix(colon + 1);
  }
  return parts;
}

bool followed(std::string_view name) {
  return name.rfind("libkjit-", 0) == 0 || name.rfind("libLLVM", 0) == 0 ||
         name.rfind("libMLIR", 0) == 0;
}

} // namespace

std::string fileIdentity(const std::string &path) {
  std::optional<ElfInfo> info = readElf(path);
  if (info && info->buildId)
    return "gnu:" + *info->buildId;
  return statIdentity(path);
}

std::string libraryClosureIdentity(const std::string &path) {
  std::optional<ElfInfo> root = readElf(path);
  if (!root)
    return strCat(path, "=", statIdentity(path));
  std::string identity = strCat(
      path, "=", root->buildId ? "gnu:" + *root->buildId : statIdentity(path));
  const char *ldPath = std::getenv("LD_LIBRARY_PATH");
  std::vector<std::string> searchFirst =
      ldPath ? splitPath(ldPath) : std::vector<std::string>();
  std::map<std::string, std::string> found; // name -> identity, sorted
  struct Pending {
    std::string name, from, runpath;
  };
  std::vector<Pending> work;
  for (const std::string &name : root->needed)
    if (followed(name))
      work.push_back({name, directoryOf(path), root->runpath});
  while (!work.empty() && found.size() < 32) {
    Pending next = std::move(work.back());
    work.pop_back();
    if (found.count(next.name))
      continue;
    std::vector<std::string> dirs = searchFirst;
    for (std::string dir : splitPath(next.runpath)) {
      for (const char *origin : {"$ORIGIN", "${ORIGIN}"})
        for (size_t at; (at = dir.find(origin)) != std::string::npos;)
          dir.replace(at, std::strlen(origin), next.from);
      dirs.push_back(dir);
    }
    for (const char *system : {"/lib/x86_64-linux-gnu",
                               "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"})
      dirs.emplace_back(system);
    std::string file;
    for (const std::string &dir : dirs) {
      std::string candidate = dir + "/" + next.name;
      if (access(candidate.c_str(), R_OK) == 0) {
        file = candidate;
        break;
      }
    }
    if (file.empty()) {
      found[next.name] = "missing";
      continue;
    }
    std::optional<ElfInfo> info = readElf(file);
    found[next.name] =
        info && info->buildId ? "gnu:" + *info->buildId : statIdentity(file);
    if (info)
      for (const std::string &name : info->needed)
        if (followed(name) && !found.count(name))
          work.push_back({name, directoryOf(file), info->runpath});
  }
  for (const auto &[name, id] : found)
    strAppend(&identity, ";", name, "=", id);
  return identity;
}

std::string loadedObjectIdentity(const void *address) {
  struct Search {
    uintptr_t address;
    std::optional<std::string> buildId;
    bool found = false;
  } search{reinterpret_cast<uintptr_t>(address), std::nullopt};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) -> int {
        Search &s = *static_cast<Search *>(data);
        bool inside = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s.address >= start &&
              s.address < start + ph.p_memsz)
            inside = true;
        }
        if (!inside)
          return 0;
        s.found = true;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_NOTE && !s.buildId)
            s.buildId = findBuildId(reinterpret_cast<const unsigned char *>(
                                        info->dlpi_addr + ph.p_vaddr),
                                    ph.p_memsz);
        }
        return 1;
      },
      &search);
  if (search.buildId)
    return "gnu:" + *search.buildId;
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname)
    return statIdentity(info.dli_fname);
  return "unknown";
}

} // namespace kjit::cache
