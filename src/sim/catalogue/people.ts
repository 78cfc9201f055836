/**
 * Countries, name parts and colours for the invented players and clubs of the simulated world.
 * Names mix scripts the way real player lists do: Latin, Cyrillic, Greek, Arabic, Hebrew, CJK,
 * Thai, stylised letters and emoji, some with the game's colour markup.
 */

export type Script = 'latin' | 'cyrillic' | 'greek' | 'arabic' | 'hebrew' | 'chinese' | 'japanese' | 'korean' | 'thai';

export interface Country {
  code: string;
  /** relative share of players */
  weight: number;
  /** scripts used for names, most common first */
  scripts: Script[];
}

export const countries: readonly Country[] = [
  { code: 'US', weight: 9, scripts: ['latin'] },
  { code: 'BR', weight: 8, scripts: ['latin'] },
  { code: 'MX', weight: 5, scripts: ['latin'] },
  { code: 'DE', weight: 4, scripts: ['latin'] },
  { code: 'FR', weight: 4, scripts: ['latin', 'arabic'] },
  { code: 'ES', weight: 4, scripts: ['latin'] },
  { code: 'IT', weight: 3, scripts: ['latin'] },
  { code: 'RU', weight: 6, scripts: ['cyrillic', 'latin'] },
  { code: 'TR', weight: 4, scripts: ['latin'] },
  { code: 'KR', weight: 3, scripts: ['korean', 'latin'] },
  { code: 'JP', weight: 3, scripts: ['japanese', 'latin'] },
  { code: 'GB', weight: 3, scripts: ['latin'] },
  { code: 'CA', weight: 2, scripts: ['latin'] },
  { code: 'AR', weight: 2, scripts: ['latin'] },
  { code: 'CO', weight: 2, scripts: ['latin'] },
  { code: 'CL', weight: 1.5, scripts: ['latin'] },
  { code: 'PE', weight: 1.5, scripts: ['latin'] },
  { code: 'PL', weight: 2, scripts: ['latin'] },
  { code: 'UA', weight: 2, scripts: ['cyrillic', 'latin'] },
  { code: 'NL', weight: 1.5, scripts: ['latin'] },
  { code: 'BE', weight: 1, scripts: ['latin'] },
  { code: 'PT', weight: 1, scripts: ['latin'] },
  { code: 'GR', weight: 1, scripts: ['greek', 'latin'] },
  { code: 'SA', weight: 2, scripts: ['arabic', 'latin'] },
  { code: 'AE', weight: 1, scripts: ['arabic', 'latin'] },
  { code: 'EG', weight: 1.5, scripts: ['arabic', 'latin'] },
  { code: 'IL', weight: 1, scripts: ['hebrew', 'latin'] },
  { code: 'TH', weight: 1.5, scripts: ['thai', 'latin'] },
  { code: 'TW', weight: 1.5, scripts: ['chinese', 'latin'] },
  { code: 'HK', weight: 1, scripts: ['chinese', 'latin'] },
  { code: 'ID', weight: 2, scripts: ['latin'] },
  { code: 'PH', weight: 1.5, scripts: ['latin'] },
  { code: 'VN', weight: 1.5, scripts: ['latin'] },
  { code: 'IN', weight: 2, scripts: ['latin'] },
  { code: 'AU', weight: 1, scripts: ['latin'] },
  { code: 'SE', weight: 1, scripts: ['latin'] },
];

/** Given names / nicknames per script. */
export const nameParts: Record<Script, readonly string[]> = {
  latin: [
    'Rika', 'kiko', 'Tobi', 'Jul', 'Mirko', 'NOVA', 'Lucas', 'Mateo', 'Enzo', 'Leo', 'Noah', 'Liam', 'Emma', 'Mia', 'Sofia',
    'Valen', 'Gabriel', 'Pedro', 'Juanito', 'Nico', 'Hugo', 'Theo', 'Luca', 'Marco', 'Giulia', 'Finn', 'Jonas', 'Lena',
    'Kerem', 'Emir', 'Deniz', 'Zeynep', 'Yusuf', 'Ayaan', 'Arjun', 'Rafa', 'Thiago', 'Bruno', 'Davi', 'Kaio', 'Igor',
    'Max', 'Sam', 'Alex', 'Charlie', 'Jake', 'Ella', 'Zoe', 'Lily', 'Oscar', 'Jan', 'Kuba', 'Piotr', 'Anh', 'Minh', 'Budi',
    'Putri', 'Joshua', 'Paolo', 'Nils', 'Erik', 'Sven', 'Tomás', 'Iñaki', 'Zoë', 'Chloé', 'Mathéo', 'Raphaël', 'Jürgen',
    'Björn', 'Çağan', 'Şule', 'Łukasz', 'Nguyễn', 'Spike', 'Crowie', 'Shadow', 'Ghost', 'Blaze', 'Viper', 'Frosty', 'Ace',
    'Dark', 'Sniper', 'Ninja', 'Panda', 'Tiger', 'Wolf', 'Fox', 'Pixel', 'Toxic', 'Storm', 'Lucky', 'Chill', 'Mortis Main',
    'Leon God', 'Edgar Boss', 'Gem Carrier', 'Brawler', 'Starr', 'Legend', 'Pro', 'Noob', 'King', 'Queen', 'Prince',
  ],
  cyrillic: [
    'Саша', 'Дима', 'Кирилл', 'Тёма', 'Влад', 'Настя', 'Миша', 'Егор', 'Максим', 'Артём', 'Даша', 'Лёша', 'Никита',
    'Ваня', 'Соня', 'Богдан', 'Олег', 'Катя', 'Тимур', 'Серёга', 'Призрак', 'Волк', 'Тень', 'Бравлер', 'Нуб',
  ],
  greek: ['Νίκος', 'Γιώργος', 'Ελένη', 'Δημήτρης', 'Κώστας', 'Μαρία', 'Αλέξης', 'Σοφία', 'Γιάννης', 'Άρης'],
  arabic: ['أحمد', 'محمد', 'يوسف', 'سارة', 'عمر', 'ليلى', 'خالد', 'فهد', 'نور', 'علي', 'حمزة', 'مريم', 'الملك', 'الذيب'],
  hebrew: ['דניאל', 'נועה', 'איתי', 'יונתן', 'אורי', 'תמר', 'עומר', 'מאיה', 'אריאל', 'רועי'],
  chinese: ['小明', '龍', '阿傑', '小雨', '王者', '天天', '星星', '老虎', '大神', '無敵', '阿華', '小鳳'],
  japanese: ['さくら', 'ゆうと', 'タロウ', 'はると', 'ひなた', 'ソラ', 'リン', 'ケンジ', 'ユイ', 'かいと', '侍', 'ねこ'],
  korean: ['민준', '서연', '지호', '하은', '도윤', '수아', '예준', '지우', '현우', '별빛', '호랑이', '용사'],
  thai: ['สมชาย', 'น้องเบียร์', 'ต้นกล้า', 'ฟ้าใส', 'มะลิ', 'กล้วย', 'เสือ', 'น้ำฝน', 'ภูมิ', 'ขวัญ'],
};

/** Decorations players add around their names. */
export const decorations = {
  prefixes: ['', '', '', '', '', '', 'xX', '亗', '★', 'ツ', 'BR|', 'TR|', 'YT|', '乂', '[TOP]', 'ᴮᴿ', '⚡', '~'],
  suffixes: ['', '', '', '', '', '', '⭐', '👑', '✨', '🔥', '💀', '🐉', '🦊', '😎', 'Xx', 'ツ', '_YT', '07', '2010', '123', '🌙', '♡', '™'],
};

/** Club name words (mixed languages; combined as "<adjective> <noun>" or used alone). */
export const clubWords = {
  adjectives: [
    'Night', 'Lemon', 'Golden', 'Silent', 'Crazy', 'Royal', 'Dark', 'Red', 'Blue', 'Cosmic', 'Frozen', 'Wild', 'Toxic',
    'Elite', 'Eternal', 'Iron', 'Lucky', 'Brave', 'Lunar', 'Savage', 'Los', 'Les', 'Die', 'Team', 'Clan',
  ],
  nouns: [
    'Owls', 'Ladder🍋', 'Wolves', 'Dragons', 'Legends', 'Kings', 'Knights', 'Titans', 'Phoenix', 'Brawlers', 'Stars',
    'Ninjas', 'Tigers', 'Pandas', 'Vikings', 'Samurai', 'Spartans', 'Reyes', 'Loups', 'Adler', 'Squad', 'Family',
    'Academy', 'Esports', 'Crew',
  ],
  native: [
    'Команда', 'Братство', 'Волки', 'الأبطال', 'النخبة', 'ドラゴン', '侍ジャパン', '용사들', '별빛', '天下無敵', '龍之隊',
    'ทีมเสือ', 'Ομάδα', 'האריות', 'Los Pibes', 'Família BR', 'Türk Gücü', 'Gli Invincibili',
  ],
};

export const clubDescriptions: readonly string[] = [
  'active daily 🦉 | 1 week inactive = kick',
  'Be active, play club league, have fun!',
  'Only active players. Club League every week 🏆',
  'Chill club, no toxicity 😊',
  'Top club of the country 🔥 requirements strict',
  'Discord in bio | push together',
  'Clube brasileiro 🇧🇷 ativo',
  'Club français, actif et sympa',
  'Клуб для активных игроков',
  'نادي عربي نشط 🌙',
  'アクティブな人募集中！',
  '매일 활동하는 클럽입니다',
  'Aktive Spieler gesucht! Mega Pig jede Woche 🐷',
  'family club 💜\nplay mega pig!',
  '',
];

/** nameColor values seen in real data (upstream-api.md §1); the first is by far the most common. */
export const nameColors: readonly string[] = [
  '0xffffffff', '0xff1ba5f5', '0xffcb5aff', '0xffff9727', '0xfff9c908', '0xffff8afb', '0xffa8e132', '0xffa2e3fe',
  '0xff4ddba2', '0xfff05637', '0xffffce89', '0xfff9775d',
];

/** Colour markup codes used in `<cN>…</c>` name markup. */
export const markupCodes: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9];
