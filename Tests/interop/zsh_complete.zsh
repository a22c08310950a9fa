# Completes a command line in a real interactive zsh (on a pseudo-terminal, with compinit), and
# prints the candidates its completion functions offer, one line per compadd call.
# usage: zsh zsh_complete.zsh COMPLETION_SCRIPT "words typed so far"
# A directory instead of a script is put first in $fpath, for compinit to find _authctl there.
# Nothing here waits a fixed time: every step waits for a marker the shell prints once it is done,
# with one generous deadline for the whole run (a loaded machine is slow, not wrong).
zmodload zsh/zpty zsh/zselect zsh/datetime
float deadline=$(( EPOCHREALTIME + 60 ))
zpty -b shell zsh -f -i
# The next line the shell writes. A read can fail before the shell has opened its side of the
# terminal (EIO on the master): retry until the deadline.
next_line() {
    while (( EPOCHREALTIME < deadline )); do
        zpty -r shell line && return 0
        zselect -t 2
    done
    print -r -- "@@ERROR no answer from the shell within 60 s"
    exit 1
}
zpty -w shell "PS1=''; PS2=''"
[[ -d $1 ]] && zpty -w shell "fpath=(${(q)1} \$fpath)"
zpty -w shell "autoload -Uz compinit && compinit -u -D"
[[ -d $1 ]] || zpty -w shell "source ${(q)1}"
# Every candidate a completion function adds is also printed, marked; calls that only collect
# or describe matches (-O, -A, -D) pass through untouched. Markers are split in the commands
# ("@@MA""TCH") so the terminal's echo of a command never reads as its output.
zpty -w shell 'compadd() { if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -O hits "$@"; (( $#hits )) && print -r -- "@@MA""TCH ${(j: :)hits}" > /dev/tty; builtin compadd "$@"; }'
# Tab completes, then prints a marker: the driver knows when the completion has run.
zpty -w shell '_probe_complete() { zle complete-word; print -r -- "@@COMP""LETED" > /dev/tty; }; zle -N _probe_complete; bindkey "^I" _probe_complete'
zpty -w shell 'zstyle ":completion:*" menu no; print -r -- @@RE""ADY'
local line
report() {
    [[ $line == *@@MATCH* ]] && print -r -- "${${line#*@@MATCH }%$'\r'}"
    [[ $line == *'(eval)'* || $line == *'_arguments'*rror* ]] && print -r -- "@@ERROR ${line%$'\r'}"
}
while next_line; do [[ $line == *@@READY* ]] && break; done
zpty -w -n shell "$2"$'\t'
while next_line; do report; [[ $line == *@@COMPLETED* ]] && break; done
zpty -w -n shell $'\C-u'
zpty -w shell 'print -r -- @@DO""NE'
while next_line; do report; [[ $line == *@@DONE* ]] && break; done
zpty -d shell
